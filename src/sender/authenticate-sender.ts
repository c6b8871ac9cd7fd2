import { PassThrough, type Writable } from 'node:stream';
import type { AuthenticateOptions } from 'mailauth';
import { summarizeAuthentication } from './authentication-results.ts';
import type { DnsResolver } from './dns-resolver.ts';
import { loadMailauth, type Mailauth } from './load-mailauth.ts';
import type { SenderEvidence } from './sender-policy.ts';

export interface SenderAuthenticatorOptions {
  /** Answers every DNS question of SPF, DKIM, DMARC and ARC. */
  resolver: DnsResolver;
  /** This server's name (smtp.hostname): the authserv-id of the results. */
  hostname: string;
}

/** What the SMTP session knows about the client, as SPF checks it. */
export interface AuthenticationContext {
  /** The connecting IP address (SPF's <ip>). */
  remoteAddress: string | null;
  /** The HELO/EHLO name. */
  helo: string | null;
  /** MAIL FROM; null for the null reverse-path `<>` (SPF then checks the HELO name). */
  mailFrom: string | null;
}

/** One message's authentication, running while the message streams in. */
export interface AuthenticationRun {
  /** Write the message here as it arrives and end it; once the run has settled, bytes are dropped. */
  readonly input: Writable;
  /** The results with the rule to judge them by, once `input` has ended and every lookup has answered. */
  readonly evidence: Promise<SenderEvidence>;
  /** The message will not be used: stop, and let `evidence` reject. */
  abort(): void;
}

export interface SenderAuthenticator {
  start(context: AuthenticationContext): AuthenticationRun;
  /**
   * Loads mailauth now rather than on the first message: its load is one synchronous step of
   * about 300 ms of CPU (compiling mailauth, the Public Suffix List and Joi), which would hold up
   * every other session behind that first message.
   */
  prepare(): Promise<void>;
}

/**
 * RFC 7208 §4.6.4: an SPF evaluation may be cut off after at least 20 seconds (temperror).
 * DNS timeouts bound each query; this bounds the whole walk through includes and redirects.
 */
const SPF_TIME_LIMIT_MS = 20_000;

/**
 * Checks SPF, DKIM, DMARC and ARC with mailauth as the message streams in: mailauth hashes
 * the body as it passes and holds only the header block, so no whole message is kept. The
 * DNS lookups run when the message has ended (DKIM keys, then SPF, ARC keys, DMARC).
 *
 * rsa-sha1 signatures do not count (RFC 8301 §3.1), and RSA keys under 1024 bits neither
 * (mailauth's default). BIMI is not checked: it says nothing about who sent the message.
 *
 * mailauth is loaded by prepare(), which the SMTP role calls at start when a workspace
 * authenticates senders, else by the first run (a workspace that starts authenticating after a
 * reload; load-mailauth.ts): until then `input` buffers up to its high-water mark and the tee
 * waits, as it does for any slow reader.
 */
export function createSenderAuthenticator(options: SenderAuthenticatorOptions): SenderAuthenticator {
  let mailauth: Promise<Mailauth> | undefined;
  return {
    async prepare() {
      mailauth ??= loadMailauth();
      await mailauth;
    },
    start(context) {
      const input = new PassThrough();
      // authenticate() hands its options to the SPF check, which reads maxElapsedTime;
      // mailauth's AuthenticateOptions type does not list it.
      const settings: AuthenticateOptions & { maxElapsedTime: number } = {
        resolver: options.resolver,
        mta: options.hostname,
        ...(context.remoteAddress ? { ip: context.remoteAddress } : {}),
        ...(context.helo ? { helo: context.helo } : {}),
        ...(context.mailFrom ? { sender: context.mailFrom } : {}),
        trustReceived: false,
        rejectRsaSha1: true,
        disableBimi: true,
        maxElapsedTime: SPF_TIME_LIMIT_MS,
      };
      mailauth ??= loadMailauth();
      const evidence = mailauth.then(async (library): Promise<SenderEvidence> => {
        // Aborted while mailauth loaded: a destroyed stream would never end for it.
        if (input.destroyed) throw new Error('authentication aborted: the message was not taken');
        const result = await library.authenticate(input, settings);
        return {
          results: summarizeAuthentication(result, library.parseHeader),
          alignsRelaxed: library.alignsRelaxed,
        };
      });
      // The cause reaches the caller through `evidence`; a stream error has no other reader.
      input.on('error', () => undefined);
      // Once settled (a parse error included), whatever the tee still writes is dropped. This
      // also handles a rejection of `evidence` that nobody awaits (an aborted run).
      void evidence.then(
        () => input.resume(),
        () => input.resume(),
      );
      return {
        input,
        evidence,
        abort() {
          if (!input.destroyed) input.destroy(new Error('authentication aborted: the message was not taken'));
        },
      };
    },
  };
}
