import * as z from 'zod/mini';
import {
  baseUrl,
  type DeepReadonly,
  integer,
  LOG_LEVELS,
  nonEmptyString,
  port,
  redisUrl,
} from '../config-fields.ts';
import { discoverySettingsSchema } from '../intake/discovery-settings-schema.ts';
import { noticeIssues, noticeSettingsSchema } from '../notices/notice-settings-schema.ts';
import { isLoopbackHost, plainHttpRefusal } from '../parsing-api/base-url-policy.ts';
import { scanSettingsSchema, scanWorkspaceIssues } from '../scan/scan-settings-schema.ts';
import { authSettingsSchema, dnsSettingsSchema } from '../sender/sender-settings-schema.ts';
import { smtpSettingsSchema } from '../smtp/smtp-settings-schema.ts';
import { uploadSettingsSchema } from '../uploader/upload-settings-schema.ts';
import { eventSettingsSchema } from '../webhooks/webhook-settings-schema.ts';
import { workspacesSchema } from './workspace-schema.ts';

/**
 * The gateway's configuration (README, "Configuration"). Every object is
 * strict, so a misspelt key is a problem rather than a silently ignored setting. The schema
 * is pure: no defaults from the machine or the environment (load-config.ts applies those).
 */

/** "host:port" of a Sentinel or a cluster node. */
const hostPortEntry = () => z.string().check(z.regex(/^[^\s:]+:\d{1,5}$/, { error: 'expected host:port' }));

const redisSchema = z.strictObject({
  /** redis:// or rediss:// URL; default redis://127.0.0.1:6379. Env REDIS_URL. */
  url: z._default(redisUrl(), 'redis://127.0.0.1:6379'),
  /**
   * Start of every key the gateway writes; default ingest. No `{`, `}` (they would change
   * the Redis Cluster hash tags the key layout relies on) and no `:` (the separator).
   */
  prefix: z._default(
    z.string().check(z.regex(/^[A-Za-z0-9._-]+$/, { error: 'expected letters, digits, "-", "_" or "."' })),
    'ingest',
  ),
  /**
   * Sentinels ("host:port") that know the master: the gateway then asks them where Redis is,
   * and follows a failover; `url` still gives the password and database. Default none.
   */
  sentinels: z._default(z.array(hostPortEntry()), []),
  /** The master's name in the Sentinels' configuration; default mymaster. */
  sentinelName: z._default(nonEmptyString(), 'mymaster'),
  /**
   * Seed nodes ("host:port") of a Redis Cluster: the gateway then connects through the
   * cluster client, which learns every node from them and follows a replica's promotion;
   * `url` still gives the user, password and TLS (rediss:), not the host. Default none (one Redis).
   */
  cluster: z._default(z.array(hostPortEntry()), []),
  /**
   * When nothing answers at `url`, start a private redis-server (data in .data/redis) and stop
   * it on exit; default false. For local development only: a production gateway must wait for
   * its own Redis, never run on an empty one.
   */
  startLocal: z._default(z.boolean(), false),
  /**
   * Start even though Redis may evict keys (maxmemory-policy other than noeviction); default
   * false: eviction can drop accepted mail, so the gateway refuses to start without this.
   */
  allowEviction: z._default(z.boolean(), false),
  /**
   * Wait until Redis has fsynced the commit to its AOF (WAITAOF, Redis >= 7.2) before
   * answering 250; default false. Costs one fsync wait per message.
   */
  waitAof: z._default(z.boolean(), false),
  /** Milliseconds WAITAOF may take before the message gets 451 instead; default 2000. */
  waitAofTimeout: z._default(integer(10, 60_000), 2000),
});

/** The redis section: one way to reach Redis, and a cluster has no database but 0. */
const redisSection = redisSchema.check(
  z.superRefine((redis, ctx) => {
    if (redis.cluster.length === 0) return;
    if (redis.sentinels.length > 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['cluster'],
        message: 'cannot be combined with redis.sentinels: a Redis Cluster fails over by itself',
      });
    }
    const database = new URL(redis.url).pathname.slice(1);
    if (database !== '' && database !== '0') {
      ctx.addIssue({
        code: 'custom',
        path: ['url'],
        message: `names database ${database}, but a Redis Cluster has only database 0`,
      });
    }
    if (redis.startLocal) {
      ctx.addIssue({
        code: 'custom',
        path: ['startLocal'],
        message: 'cannot be combined with redis.cluster: a private redis-server is no cluster',
      });
    }
  }),
);

const retentionSchema = z.strictObject({
  /**
   * Seconds a message (its raw copy, record, blobs and document index) is kept after
   * receipt; default 2592000 (30 days). An upload still pending then fails for want of its blob.
   */
  messages: z._default(integer(3600, 10 * 365 * 86_400), 30 * 86_400),
  /**
   * Seconds a held message is kept after receipt unless it is released (then retention.messages
   * applies from the release), at most retention.messages; default 1209600 (14 days).
   * Unreleased, it expires: discarded.
   */
  held: z._default(integer(3600, 10 * 365 * 86_400), 14 * 86_400),
  /**
   * Seconds an entry of the refusal log (GET /v1/refusals) is kept; default 604800 (7 days).
   */
  refusals: z._default(integer(3600, 365 * 86_400), 7 * 86_400),
  /**
   * Entries the refusal log keeps at most, whatever their age; default 20000. Past it the
   * oldest go first, so a flood of refusals cannot fill Redis (each entry is at most about 1.5 KB).
   */
  maxRefusals: z._default(integer(100, 1_000_000), 20_000),
  /** Seconds a completed upload job is kept (it makes a repeated job recognisable); default 604800 (7 days). */
  completedJobs: z._default(integer(60, 365 * 86_400), 7 * 86_400),
  /** Seconds a failed upload job is kept for `failed list` / `failed retry`; default 2592000 (30 days). */
  failedJobs: z._default(integer(60, 10 * 365 * 86_400), 30 * 86_400),
});

const apiSchema = z
  .strictObject({
    /** The parsing service, e.g. https://api.eu1.example.com; required unless mock. Env PARSER_API_URL. */
    baseUrl: z.optional(baseUrl()),
    /** true: run the built-in mock API in-process and upload to it; default false. */
    mock: z._default(z.boolean(), false),
    /** Bearer API key; required unless mock (or apiKeyFile), never logged. Env PARSER_API_KEY. */
    apiKey: z.optional(z.string()),
    /**
     * A file holding the API key (a Docker or Kubernetes secret), read at start and again on
     * SIGHUP, so a corrected key takes effect without a restart; PARSER_API_KEY still wins.
     */
    apiKeyFile: z.optional(nonEmptyString()),
    /**
     * Allow an http: baseUrl to a host that is not loopback; default false. Only for a test
     * network (docker compose's mock-api): the key then crosses the network in clear.
     */
    allowInsecureHttp: z._default(z.boolean(), false),
    /** Milliseconds one upload request may take; default 60000. */
    timeout: z._default(integer(1000, 3_600_000), 60_000),
  })
  .check(
    z.superRefine((api, ctx) => {
      // Mock mode is never implied: a forgotten baseUrl must not quietly go nowhere.
      if (!api.mock && api.baseUrl === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['baseUrl'],
          message: 'is required unless api.mock is true; set it or PARSER_API_URL',
        });
      }
      // The transport applies the same policy at start, so what passes here also starts.
      const refusal =
        api.baseUrl === undefined ? undefined : plainHttpRefusal(new URL(api.baseUrl), api.allowInsecureHttp);
      if (refusal !== undefined) ctx.addIssue({ code: 'custom', path: ['baseUrl'], message: refusal });
      if (!api.mock && (api.apiKey === undefined || api.apiKey === '') && api.apiKeyFile === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['apiKey'],
          message: 'is required unless api.mock is true; set PARSER_API_KEY or api.apiKeyFile',
        });
      }
    }),
  );

const httpSchema = z.strictObject({
  /** Interface of the health, metrics and message-record API; default 127.0.0.1. */
  host: z._default(nonEmptyString(), '127.0.0.1'),
  /** TCP port; default 8025, 0 picks a free one. Env HTTP_PORT. */
  port: z._default(port(), 8025),
  /** Base URL of `sourceEmail` links, as readers reach this API; default the URL the API listens on. Env PUBLIC_URL. */
  publicUrl: z.optional(baseUrl()),
  /**
   * Bearer token every endpoint but /healthz requires; required when host is not loopback
   * (the API serves whole e-mails). At least 16 characters. Env HTTP_TOKEN; never printed.
   */
  token: z.optional(z.string().check(z.minLength(16, { error: 'must be at least 16 characters' }))),
  /**
   * DELETE /v1/messages erases everything the gateway stored under redis.prefix, for test
   * isolation; default false (the route answers 403). Never in production.
   */
  allowReset: z._default(z.boolean(), false),
});

const logSchema = z.strictObject({
  /** pino level; default info. Env LOG_LEVEL. */
  level: z._default(z.enum(LOG_LEVELS, { error: `expected one of ${LOG_LEVELS.join(', ')}` }), 'info'),
});

/** The http section: a token is required wherever the API is reachable from the network. */
const httpSection = httpSchema.check(
  z.superRefine((http, ctx) => {
    // The parsing API's notion of loopback, so the codebase has one table of loopback hosts.
    if (http.token === undefined && !isLoopbackHost(http.host)) {
      ctx.addIssue({
        code: 'custom',
        path: ['token'],
        message: `is required when host is ${http.host} (not loopback): the API serves stored e-mails; set HTTP_TOKEN`,
      });
    }
  }),
);

/**
 * The whole file. Sections default to `{}` (prefault) so their own defaults apply when a
 * section is left out; `workspaces` has no default.
 */
export const gatewayConfigSchema = z
  .strictObject({
    smtp: z.prefault(smtpSettingsSchema, {}),
    redis: z.prefault(redisSection, {}),
    retention: z.prefault(retentionSchema, {}),
    api: z.prefault(apiSchema, {}),
    upload: z.prefault(uploadSettingsSchema, {}),
    http: z.prefault(httpSection, {}),
    log: z.prefault(logSchema, {}),
    /** Sender authentication: the default mode and the trusted ARC sealers (src/sender/sender-settings-schema.ts). */
    auth: z.prefault(authSettingsSchema, {}),
    /** The DNS resolver of sender authentication (src/sender/sender-settings-schema.ts). */
    dns: z.prefault(dnsSettingsSchema, {}),
    /** Malware and spam scanning by the operator's clamd and rspamd (src/scan/scan-settings-schema.ts). */
    scan: z.prefault(scanSettingsSchema, {}),
    /** Signed webhooks announcing what happens to mail and documents (src/webhooks/webhook-settings-schema.ts). */
    events: z.prefault(eventSettingsSchema, {}),
    /** Notices to senders through an outbound relay (src/notices/notice-settings-schema.ts). */
    notices: z.prefault(noticeSettingsSchema, {}),
    /** Routes read from the parsing service (src/intake/discovery-settings-schema.ts); default off. */
    discovery: z.optional(discoverySettingsSchema),
    /** Default none when `discovery` is set; otherwise at least one. */
    workspaces: z._default(workspacesSchema, []),
  })
  .check(
    // Without discovery the file is the whole route table: each entry needs its address.
    z.superRefine((config, ctx) => {
      if (config.discovery !== undefined) return;
      if (config.workspaces.length === 0) {
        ctx.addIssue({
          code: 'custom',
          path: ['workspaces'],
          message: 'expected at least one workspace (or discovery, to read them from the service)',
        });
      }
      config.workspaces.forEach((workspace, index) => {
        if (workspace.ingestEmail !== undefined) return;
        ctx.addIssue({
          code: 'custom',
          path: ['workspaces', index, 'ingestEmail'],
          message: 'required unless discovery reads the workspace from the service',
        });
      });
    }),
    // A workspace's malware or spam policy needs its scanner: a policy for a scanner that is not
    // configured would silently scan nothing.
    z.superRefine((config, ctx) => {
      config.workspaces.forEach((workspace, index) => {
        for (const { key, message } of scanWorkspaceIssues(workspace, config.scan)) {
          ctx.addIssue({ code: 'custom', path: ['workspaces', index, key], message });
        }
        // Fields for tags no address is read with would silently never apply.
        if (workspace.subaddresses !== undefined && config.smtp.subaddressSeparator === null) {
          ctx.addIssue({
            code: 'custom',
            path: ['workspaces', index, 'subaddresses'],
            message:
              'applies to no mail while smtp.subaddressSeparator is null: set a separator or remove it',
          });
        }
      });
      // A workspace that notifies its senders needs the relay to do it through.
      for (const { path, message } of noticeIssues(config.notices, config.workspaces)) {
        ctx.addIssue({ code: 'custom', path, message });
      }
    }),
  );

type SchemaOutput = z.output<typeof gatewayConfigSchema>;

/** The validated, frozen configuration. */
export type GatewayConfig = DeepReadonly<SchemaOutput>;

/** A `workspaces` entry as the file gives it: with `discovery`, it may name no ingestEmail. */
export type FileWorkspace = GatewayConfig['workspaces'][number];

/** A workspace the route table holds: one with its ingest address. */
export type WorkspaceConfig = FileWorkspace & { readonly ingestEmail: string };

/** Whether the entry names its ingest address (always, without `discovery`). */
export function hasIngestEmail(workspace: FileWorkspace): workspace is WorkspaceConfig {
  return workspace.ingestEmail !== undefined;
}

/** The entries of the file that route by themselves: those that name their address. */
export function fileRoutes(config: Pick<GatewayConfig, 'workspaces'>): WorkspaceConfig[] {
  return config.workspaces.filter(hasIngestEmail);
}
