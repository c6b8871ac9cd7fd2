import * as z from 'zod/mini';
import { type DeepReadonly, integer, nonEmptyString, port } from '../config-fields.ts';
import { isSeparator, SEPARATOR_CHARACTERS } from '../sender/subaddress.ts';
import { parseCidr } from './network-list.ts';

/**
 * The `smtp` section of the configuration: the listener, the session limits and the message
 * limits the intake applies. src/config/schema.ts composes it with the other sections.
 */

const MIB = 1024 * 1024;

/** A client network: `10.0.0.0/8`, `2001:db8::/32`, or one address. */
const network = () =>
  z.string().check(
    z.refine((text) => parseCidr(text) !== null, {
      error: 'expected an IP address or a CIDR block such as 10.0.0.0/8',
    }),
  );

/**
 * Rates counted in Redis, so every instance sharing it enforces one limit (a sliding window
 * of two fixed ones). 0 turns a rate off. IPv6 clients are counted per /64, the block one
 * subscriber gets.
 */
const rateLimitSchema = z.strictObject({
  /** Milliseconds each rate is counted over; default 60000. */
  window: z._default(integer(1000, 86_400_000), 60_000),
  /** Connections per client address and window; default 300. Past it: 421 4.7.0 at connect. */
  connectionsPerIp: z._default(integer(0, 1_000_000), 300),
  /** MAIL commands per client address and window; default 600. Past it: 450 4.7.1 at MAIL. */
  messagesPerIp: z._default(integer(0, 1_000_000), 600),
  /** MAIL commands per envelope sender (MAIL FROM) and window; default 120. Past it: 450 4.7.1 at MAIL. */
  messagesPerSender: z._default(integer(0, 1_000_000), 120),
  /** Client networks no rate applies to; default loopback (as Postfix exempts $mynetworks). */
  exempt: z._default(z.array(network()), ['127.0.0.0/8', '::1/128']),
});

/** STARTTLS certificate: PEM files read at start. Without it STARTTLS is not offered. */
const tlsSchema = z.strictObject({
  /** Path of the PEM private key. */
  key: nonEmptyString(),
  /** Path of the PEM certificate chain, the server's certificate first. */
  cert: nonEmptyString(),
});

const smtpSchema = z.strictObject({
  /**
   * Interface to listen on; default `::`: every interface, IPv6 and IPv4 (dual-stack), or
   * every IPv4 interface on a host without IPv6 (src/listen-host.ts).
   */
  host: z._default(nonEmptyString(), '::'),
  /** TCP port; default 2525, 0 picks a free one. Env SMTP_PORT. */
  port: z._default(port(), 2525),
  /** Name in the banner and the EHLO reply; default localhost (set the MX name in production). Env SMTP_HOSTNAME. */
  hostname: z._default(nonEmptyString(), 'localhost'),
  /** Bytes; default 26214400 (25 MiB). Advertised with SIZE (RFC 1870) and enforced. */
  maxMessageSize: z._default(integer(1, 1024 * MIB), 25 * MIB),
  /** Supported attachments per message; default 10, as the service's own e-mail ingest. */
  maxAttachments: z._default(integer(1, 1000), 10),
  /** Bytes per part; default 20000000, the service's 20 MB file limit. */
  maxPartSize: z._default(integer(1, 1024 * MIB), 20_000_000),
  /** How many attached messages (message/rfc822) deep the walk goes; default 3, 0: none. */
  maxMimeDepth: z._default(integer(0, 20), 3),
  /** MIME parts per message before it is refused; default 100. */
  maxParts: z._default(integer(1, 10_000), 100),
  /** Milliseconds of client silence before the session is closed; default 60000. */
  socketTimeout: z._default(integer(1000, 3_600_000), 60_000),
  /**
   * Milliseconds between accept and the banner; default 100. A client that sends a command
   * sooner is an early talker (spamware that does not wait for the greeting) and gets 421.
   * 0 behind a trusted relay, whose clients all wait for the banner.
   */
  greetingDelay: z._default(integer(0, 30_000), 100),
  /** Milliseconds shutdown waits for sessions in DATA before closing them; default 30000. */
  closeTimeout: z._default(integer(0, 3_600_000), 30_000),
  /** Concurrent connections; default 100 (Postfix's process limit). Past it: 421 and close. */
  maxClients: z._default(integer(1, 100_000), 100),
  /** Recipients per transaction; default 100, RFC 5321 4.5.3.1.8's minimum. Past it: 452 4.5.3. */
  maxRecipients: z._default(integer(1, 10_000), 100),
  /**
   * Milliseconds one session may last however busy it is; default 600000 (10 min). Bounds
   * a client that trickles bytes just often enough to beat socketTimeout. Then: 421 4.4.2.
   */
  sessionTimeout: z._default(integer(1000, 86_400_000), 600_000),
  /**
   * Address harvesting (a client guessing recipients one RCPT at a time): refused recipients
   * are counted per client over refusedRecipientWindow, across its connections. Past
   * refusedRecipientDelayAfter each further refusal is answered refusedRecipientDelay late;
   * past maxRefusedRecipients the client gets 421 4.7.0 at RCPT and is disconnected until the
   * window lets it under again. Clients in rateLimit.exempt are neither slowed nor cut off.
   */
  refusedRecipientDelayAfter: z._default(integer(0, 10_000), 3),
  /** Milliseconds each refusal past refusedRecipientDelayAfter waits before its reply; default 1000. */
  refusedRecipientDelay: z._default(integer(0, 60_000), 1000),
  /** Refused recipients per client and window; default 20. Past it: 421 4.7.0 and the connection closes. */
  maxRefusedRecipients: z._default(integer(1, 100_000), 20),
  /** Milliseconds the refused recipients of one client are counted over; default 3600000 (1 h). */
  refusedRecipientWindow: z._default(integer(1000, 86_400_000), 3_600_000),
  rateLimit: z.prefault(rateLimitSchema, {}),
  /** STARTTLS certificate; absent: STARTTLS is not offered. */
  tls: z.optional(tlsSchema),
  /** MAIL before STARTTLS gets 530 5.7.0; default false. Needs tls. */
  requireTls: z._default(z.boolean(), false),
  /**
   * Load balancers that send a PROXY protocol header (v1 or v2); default none. From these one
   * is required, from any other address it closes the connection.
   */
  proxyProtocolFrom: z._default(z.array(network()), []),
  /** Refuse DATA holding a bare CR or LF with 550 5.6.0 (SMTP smuggling); default true. */
  rejectBareLineEndings: z._default(z.boolean(), true),
  /**
   * `local+tag@domain` routes as `local@domain`, the tag recorded and its upload fields
   * applied (workspaces[].subaddresses); default `+`, null: off (only literal addresses route).
   * One of the characters an atom allows besides letters and digits (src/sender/subaddress.ts).
   */
  subaddressSeparator: z._default(
    z.nullable(
      z.string().check(
        z.refine(isSeparator, {
          error: `expected one of ${SEPARATOR_CHARACTERS} (or null to turn subaddresses off)`,
        }),
      ),
    ),
    '+',
  ),
});

/** The `smtp` section, with the checks that span its keys. */
export const smtpSettingsSchema = smtpSchema.check(
  z.superRefine((smtp, ctx) => {
    if (smtp.requireTls && smtp.tls === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['requireTls'],
        message: 'needs smtp.tls (key and cert): without a certificate STARTTLS is not offered',
      });
    }
    if (smtp.refusedRecipientDelayAfter >= smtp.maxRefusedRecipients) {
      ctx.addIssue({
        code: 'custom',
        path: ['refusedRecipientDelayAfter'],
        message: `must be less than smtp.maxRefusedRecipients (${smtp.maxRefusedRecipients}): replies slow down before the client is disconnected`,
      });
    }
  }),
);

/** The validated, frozen `smtp` section. */
export type SmtpSettings = DeepReadonly<z.output<typeof smtpSettingsSchema>>;
