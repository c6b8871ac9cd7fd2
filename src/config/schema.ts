import { z } from 'zod';
import { authSettingsSchema, dnsSettingsSchema } from '../auth/auth-settings-schema.ts';
import { parseCidr } from '../smtp/network-list.ts';
import {
  baseUrl,
  integer,
  isLoopbackHost,
  LOG_LEVELS,
  nonEmptyString,
  port,
  redisUrl,
} from './config-fields.ts';
import { workspacesSchema } from './workspace-schema.ts';

/**
 * The gateway's configuration (DESIGN.md, "Contract › Configuration"). Every object is
 * strict, so a misspelt key is a problem rather than a silently ignored setting. The schema
 * is pure: no defaults from the machine or the environment (load-config.ts applies those).
 */

const MIB = 1024 * 1024;

/** A client network: `10.0.0.0/8`, `2001:db8::/32`, or one address. */
const network = () =>
  z.string().refine((text) => parseCidr(text) !== null, {
    error: 'expected an IP address or a CIDR block such as 10.0.0.0/8',
  });

/**
 * Rates counted in Redis, so every instance sharing it enforces one limit (a sliding window
 * of two fixed ones). 0 turns a rate off. IPv6 clients are counted per /64, the block one
 * subscriber gets.
 */
const rateLimitSchema = z.strictObject({
  /** Milliseconds each rate is counted over; default 60000. */
  window: integer(1000, 86_400_000).default(60_000),
  /** Connections per client address and window; default 300. Past it: 421 4.7.0 at connect. */
  connectionsPerIp: integer(0, 1_000_000).default(300),
  /** MAIL commands per client address and window; default 600. Past it: 450 4.7.1 at MAIL. */
  messagesPerIp: integer(0, 1_000_000).default(600),
  /** MAIL commands per envelope sender (MAIL FROM) and window; default 120. Past it: 450 4.7.1 at MAIL. */
  messagesPerSender: integer(0, 1_000_000).default(120),
  /** Client networks no rate applies to; default loopback (as Postfix exempts $mynetworks). */
  exempt: z.array(network()).default(['127.0.0.0/8', '::1/128']),
});

/** STARTTLS certificate: PEM files read at start. Without it STARTTLS is not offered. */
const tlsSchema = z.strictObject({
  /** Path of the PEM private key. */
  key: nonEmptyString(),
  /** Path of the PEM certificate chain, the server's certificate first. */
  cert: nonEmptyString(),
});

const smtpSchema = z.strictObject({
  /** Interface to listen on; default 0.0.0.0 (all IPv4). */
  host: nonEmptyString().default('0.0.0.0'),
  /** TCP port; default 2525, 0 picks a free one. Env SMTP_PORT. */
  port: port().default(2525),
  /** Name in the banner and the EHLO reply; default localhost (set the MX name in production). Env SMTP_HOSTNAME. */
  hostname: nonEmptyString().default('localhost'),
  /** Bytes; default 26214400 (25 MiB). Advertised with SIZE (RFC 1870) and enforced. */
  maxMessageSize: integer(1, 1024 * MIB).default(25 * MIB),
  /** Supported attachments per message; default 10, as the service's own e-mail ingest. */
  maxAttachments: integer(1, 1000).default(10),
  /** Bytes per part; default 20000000, the service's 20 MB file limit. */
  maxPartSize: integer(1, 1024 * MIB).default(20_000_000),
  /** How many attached messages (message/rfc822) deep the walk goes; default 3, 0: none. */
  maxMimeDepth: integer(0, 20).default(3),
  /** MIME parts per message before it is refused; default 100. */
  maxParts: integer(1, 10_000).default(100),
  /** Milliseconds of client silence before the session is closed; default 60000. */
  socketTimeout: integer(1000, 3_600_000).default(60_000),
  /** Milliseconds shutdown waits for sessions in DATA before closing them; default 30000. */
  closeTimeout: integer(0, 3_600_000).default(30_000),
  /** Concurrent connections; default 100 (Postfix's process limit). Past it: 421 and close. */
  maxClients: integer(1, 100_000).default(100),
  /** Recipients per transaction; default 100, RFC 5321 4.5.3.1.8's minimum. Past it: 452 4.5.3. */
  maxRecipients: integer(1, 10_000).default(100),
  /**
   * Milliseconds one session may last however busy it is; default 600000 (10 min). Bounds
   * a client that trickles bytes just often enough to beat socketTimeout. Then: 421 4.4.2.
   */
  sessionTimeout: integer(1000, 86_400_000).default(600_000),
  rateLimit: rateLimitSchema.prefault({}),
  /** STARTTLS certificate; absent: STARTTLS is not offered. */
  tls: tlsSchema.optional(),
  /** MAIL before STARTTLS gets 530 5.7.0; default false. Needs tls. */
  requireTls: z.boolean().default(false),
  /**
   * Load balancers that send a PROXY protocol v1 header; default none. From these the header
   * is required, from any other address it closes the connection.
   */
  proxyProtocolFrom: z.array(network()).default([]),
  /** Refuse DATA holding a bare CR or LF with 550 5.6.0 (SMTP smuggling); default true. */
  rejectBareLineEndings: z.boolean().default(true),
});

const redisSchema = z.strictObject({
  /** redis:// or rediss:// URL; default redis://127.0.0.1:6379. Env REDIS_URL. */
  url: redisUrl().default('redis://127.0.0.1:6379'),
  /**
   * Start of every key the gateway writes; default ingest. No `{`, `}` (they would change
   * the Redis Cluster hash tags the key layout relies on) and no `:` (the separator).
   */
  prefix: z
    .string()
    .regex(/^[A-Za-z0-9._-]+$/, { error: 'expected letters, digits, "-", "_" or "."' })
    .default('ingest'),
  /**
   * Sentinels ("host:port") that know the master: the gateway then asks them where Redis is,
   * and follows a failover; `url` still gives the password and database. Default none.
   */
  sentinels: z.array(z.string().regex(/^[^\s:]+:\d{1,5}$/, { error: 'expected host:port' })).default([]),
  /** The master's name in the Sentinels' configuration; default mymaster. */
  sentinelName: nonEmptyString().default('mymaster'),
  /**
   * When nothing answers at `url`, start a private redis-server (data in .data/redis) and stop
   * it on exit; default false. For local development only: a production gateway must wait for
   * its own Redis, never run on an empty one.
   */
  startLocal: z.boolean().default(false),
  /**
   * Start even though Redis may evict keys (maxmemory-policy other than noeviction); default
   * false: eviction can drop accepted mail, so the gateway refuses to start without this.
   */
  allowEviction: z.boolean().default(false),
  /**
   * Wait until Redis has fsynced the commit to its AOF (WAITAOF, Redis >= 7.2) before
   * answering 250; default false. Costs one fsync wait per message.
   */
  waitAof: z.boolean().default(false),
  /** Milliseconds WAITAOF may take before the message gets 451 instead; default 2000. */
  waitAofTimeout: integer(10, 60_000).default(2000),
});

const retentionSchema = z.strictObject({
  /**
   * Seconds a message (its raw copy, record, blobs and document index) is kept after
   * receipt; default 2592000 (30 days). An upload still pending then fails for want of its blob.
   */
  messages: integer(3600, 10 * 365 * 86_400).default(30 * 86_400),
  /** Seconds a completed upload job is kept (it makes a repeated job recognisable); default 604800 (7 days). */
  completedJobs: integer(60, 365 * 86_400).default(7 * 86_400),
  /** Seconds a failed upload job is kept for `failed list` / `failed retry`; default 2592000 (30 days). */
  failedJobs: integer(60, 10 * 365 * 86_400).default(30 * 86_400),
});

const apiSchema = z
  .strictObject({
    /** The parsing service, e.g. https://api.eu1.example.com; required unless mock. Env PARSER_API_URL. */
    baseUrl: baseUrl().optional(),
    /** true: run the built-in mock API in-process and upload to it; default false. */
    mock: z.boolean().default(false),
    /** Bearer API key; required unless mock (or apiKeyFile), never logged. Env PARSER_API_KEY. */
    apiKey: z.string().optional(),
    /**
     * A file holding the API key (a Docker or Kubernetes secret), read at start and again on
     * SIGHUP, so a corrected key takes effect without a restart; PARSER_API_KEY still wins.
     */
    apiKeyFile: nonEmptyString().optional(),
    /**
     * Allow an http: baseUrl to a host that is not loopback; default false. Only for a test
     * network (docker compose's mock-api): the key then crosses the network in clear.
     */
    allowInsecureHttp: z.boolean().default(false),
    /** Milliseconds one upload request may take; default 60000. */
    timeout: integer(1000, 3_600_000).default(60_000),
  })
  .superRefine((api, ctx) => {
    // Mock mode is never implied (DESIGN.md): a forgotten baseUrl must not quietly go nowhere.
    if (!api.mock && api.baseUrl === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['baseUrl'],
        message: 'is required unless api.mock is true; set it or PARSER_API_URL',
      });
    }
    if (api.baseUrl !== undefined) {
      const url = new URL(api.baseUrl);
      if (url.protocol === 'http:' && !isLoopbackHost(url.hostname) && !api.allowInsecureHttp) {
        ctx.addIssue({
          code: 'custom',
          path: ['baseUrl'],
          message: `http: would send the API key in clear to ${url.hostname}; use https: (http: is for loopback hosts only)`,
        });
      }
    }
    if (!api.mock && (api.apiKey === undefined || api.apiKey === '') && api.apiKeyFile === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['apiKey'],
        message: 'is required unless api.mock is true; set PARSER_API_KEY or api.apiKeyFile',
      });
    }
  });

const uploadSchema = z.strictObject({
  /** Uploads in flight per worker process; default 8. */
  concurrency: integer(1, 256).default(8),
  /** Tries per attachment before it is marked failed, the first included; default 15. */
  attempts: integer(1, 100).default(15),
  /** Milliseconds: the first retry waits up to this (full jitter), doubling per attempt; default 1000. */
  retryBaseDelay: integer(10, 60_000).default(1000),
  /** Milliseconds: the longest backoff window between attempts; default 600000 (10 min). */
  retryMaxDelay: integer(100, 86_400_000).default(600_000),
  /**
   * Milliseconds a worker holds an upload's lock between renewals; a job whose worker died is
   * handed out again after about this long (BullMQ lockDuration and stalledInterval); default 30000.
   */
  stalledAfter: integer(1000, 600_000).default(30_000),
  /**
   * How often a job may be re-run after its worker stopped mid-upload (a crash, or a stop past
   * closeTimeout) before it is failed as a poison job; default 3.
   */
  maxStalls: integer(1, 100).default(3),
  /** Milliseconds stopping waits for uploads in flight before handing them back to the queue; default 30000. */
  closeTimeout: integer(0, 600_000).default(30_000),
});

const httpSchema = z.strictObject({
  /** Interface of the health, metrics and message-record API; default 127.0.0.1. */
  host: nonEmptyString().default('127.0.0.1'),
  /** TCP port; default 8025, 0 picks a free one. Env HTTP_PORT. */
  port: port().default(8025),
  /** Base URL of `sourceEmail` links, as readers reach this API; default the URL the API listens on. Env PUBLIC_URL. */
  publicUrl: baseUrl().optional(),
  /**
   * Bearer token every endpoint but /healthz requires; required when host is not loopback
   * (the API serves whole e-mails). At least 16 characters. Env HTTP_TOKEN; never printed.
   */
  token: z.string().min(16, { error: 'must be at least 16 characters' }).optional(),
});

const logSchema = z.strictObject({
  /** pino level; default info. Env LOG_LEVEL. */
  level: z.enum(LOG_LEVELS, { error: `expected one of ${LOG_LEVELS.join(', ')}` }).default('info'),
});

/** The http section: a token is required wherever the API is reachable from the network. */
const httpSection = httpSchema.superRefine((http, ctx) => {
  if (http.token === undefined && !isLoopbackHost(http.host) && http.host !== '::1') {
    ctx.addIssue({
      code: 'custom',
      path: ['token'],
      message: `is required when host is ${http.host} (not loopback): the API serves stored e-mails; set HTTP_TOKEN`,
    });
  }
});

/** The smtp section with the checks that span its keys. */
const smtpSection = smtpSchema.superRefine((smtp, ctx) => {
  if (smtp.requireTls && smtp.tls === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['requireTls'],
      message: 'needs smtp.tls (key and cert): without a certificate STARTTLS is not offered',
    });
  }
});

/**
 * The whole file. Sections default to `{}` (prefault) so their own defaults apply when a
 * section is left out; `workspaces` has no default.
 */
export const gatewayConfigSchema = z.strictObject({
  smtp: smtpSection.prefault({}),
  redis: redisSchema.prefault({}),
  retention: retentionSchema.prefault({}),
  api: apiSchema.prefault({}),
  upload: uploadSchema.prefault({}),
  http: httpSection.prefault({}),
  log: logSchema.prefault({}),
  /** Sender authentication: the default mode and the trusted ARC sealers (src/auth/auth-settings-schema.ts). */
  auth: authSettingsSchema.prefault({}),
  /** The DNS resolver of sender authentication (src/auth/auth-settings-schema.ts). */
  dns: dnsSettingsSchema.prefault({}),
  workspaces: workspacesSchema,
});

export type DeepReadonly<T> = T extends (infer Item)[]
  ? readonly DeepReadonly<Item>[]
  : T extends object
    ? { readonly [Key in keyof T]: DeepReadonly<T[Key]> }
    : T;

type SchemaOutput = z.output<typeof gatewayConfigSchema>;

/** The validated, frozen configuration. */
export type GatewayConfig = DeepReadonly<SchemaOutput>;

export type WorkspaceConfig = GatewayConfig['workspaces'][number];
