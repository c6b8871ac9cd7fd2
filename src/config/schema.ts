import { z } from 'zod';
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

const smtpSchema = z.strictObject({
  /** Interface to listen on; default 0.0.0.0 (all IPv4). */
  host: nonEmptyString().default('0.0.0.0'),
  /** TCP port; default 2525, 0 picks a free one. Env SMTP_PORT. */
  port: port().default(2525),
  /** Name in the banner and the EHLO reply; default localhost (set the MX name in production). */
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
    /** Bearer API key; required unless mock, never logged. Env PARSER_API_KEY. */
    apiKey: z.string().optional(),
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
    if (!api.mock && (api.apiKey === undefined || api.apiKey === '')) {
      ctx.addIssue({
        code: 'custom',
        path: ['apiKey'],
        message: 'is required unless api.mock is true; set PARSER_API_KEY',
      });
    }
  });

const uploadSchema = z.strictObject({
  /** Uploads in flight per worker process; default 8. */
  concurrency: integer(1, 256).default(8),
  /** Tries per attachment before it is marked failed, the first included; default 15. */
  attempts: integer(1, 100).default(15),
});

const httpSchema = z.strictObject({
  /** Interface of the health, metrics and message-record API; default 127.0.0.1. */
  host: nonEmptyString().default('127.0.0.1'),
  /** TCP port; default 8025, 0 picks a free one. Env HTTP_PORT. */
  port: port().default(8025),
  /** Base URL of `sourceEmail` links, as readers reach this API; default the URL the API listens on. */
  publicUrl: baseUrl().optional(),
});

const logSchema = z.strictObject({
  /** pino level; default info. Env LOG_LEVEL. */
  level: z.enum(LOG_LEVELS, { error: `expected one of ${LOG_LEVELS.join(', ')}` }).default('info'),
});

/**
 * The whole file. Sections default to `{}` (prefault) so their own defaults apply when a
 * section is left out; `workspaces` has no default.
 */
export const gatewayConfigSchema = z.strictObject({
  smtp: smtpSchema.prefault({}),
  redis: redisSchema.prefault({}),
  retention: retentionSchema.prefault({}),
  api: apiSchema.prefault({}),
  upload: uploadSchema.prefault({}),
  http: httpSchema.prefault({}),
  log: logSchema.prefault({}),
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
