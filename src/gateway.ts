import type { GatewayConfig, WorkspaceConfig } from './config/schema.ts';
import { createHttpApi, type HttpApi, type Readiness } from './http/create-http-api.ts';
import { createRouteTable } from './intake/route-table.ts';
import { createLifecycle, type Lifecycle } from './lifecycle.ts';
import { createLiveSettings, type LiveSettings } from './live-settings.ts';
import type { Logger } from './logger.ts';
import { createMetrics, type GatewayMetrics } from './metrics.ts';
import { createQueueDepthReader } from './queue/queue-depth.ts';
import {
  closeConnection,
  createIntakeConnection,
  createWorkerConnection,
  type RedisClient,
  redisTarget,
} from './queue/redis-connections.ts';
import { assessNodes, type Durability, readRedisFacts } from './queue/redis-durability.ts';
import { createRedisOutageLog } from './queue/redis-outage-log.ts';
import { createUploadQueue } from './queue/upload-queue.ts';
import { createKeySpace } from './record/keys.ts';
import { createMessageIndex } from './record/message-index.ts';
import { createMessageLedger } from './record/message-ledger.ts';
import type { RoleContext, RunningSettings } from './roles/role-context.ts';
import type { DnsResolver } from './sender/dns-resolver.ts';
import type { SmtpIntake } from './smtp/create-smtp-server.ts';
import { createCompletionQueue } from './uploader/completion-queue.ts';
import { createFailedUploads } from './uploader/failed-uploads.ts';
import { identifiesOneUpload } from './uploader/upload-identity.ts';
import type { UploadWorkspaces } from './uploader/upload-settings-schema.ts';
import type { UploadWorker } from './uploader/upload-worker.ts';

export type Role = 'all' | 'smtp' | 'worker';

export type { RunningSettings };

export interface GatewayOptions extends RunningSettings {
  role: Role;
  logger: Logger;
  /** The Redis to use (the composition root may have started a private one). */
  redisUrl: string;
  /**
   * The process's lifecycle, on which the gateway registers its steps after those already
   * there (main's private Redis and mock API); default a lifecycle of its own.
   */
  lifecycle?: Lifecycle;
  metrics?: GatewayMetrics;
  /** Jitter source for upload retries; tests pass () => 0 so a retry follows at once. */
  random?: () => number;
  /** DNS for sender authentication; default node:dns with config.dns. Tests pass an in-memory one. */
  resolver?: DnsResolver;
}

export interface Gateway {
  readonly smtpPort: number | null;
  readonly httpUrl: string;
  readonly durability: Durability;
  /**
   * The settings in force; replacing them applies a reloaded configuration (SIGHUP). A worker
   * paused because the service refused the key resumes.
   */
  readonly settings: LiveSettings<RunningSettings>;
  /** Closes the lifecycle: intake first, then the workers, then the HTTP API and Redis. Idempotent. */
  close(): Promise<void>;
}

/**
 * Milliseconds a shutdown may take in all: sessions in DATA get smtp.closeTimeout, uploads in
 * flight upload.closeTimeout, and 5 s closes the rest. However a step hangs (an upload past
 * its deadline waits on the API's timeout), stopping ends by then: what is still in flight is
 * recovered from Redis by the next run.
 */
export function shutdownDeadline(config: GatewayConfig): number {
  return config.smtp.closeTimeout + config.upload.closeTimeout + 5000;
}

/**
 * Builds and starts the daemon's components for one role, wiring each from its factory and
 * registering each on the lifecycle as it starts. Reads no environment and never exits:
 * src/main.ts does that.
 */
export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const { config, role, logger } = options;
  const metrics = options.metrics ?? createMetrics();
  const keys = createKeySpace(config.redis.prefix);
  const lifecycle = options.lifecycle ?? createLifecycle({ logger, deadline: shutdownDeadline(config) });
  const settings = createLiveSettings<RunningSettings>({
    config,
    apiBaseUrl: options.apiBaseUrl,
    apiKey: options.apiKey,
  });
  // Indexes of the workspaces in force, built once per reload.
  const workspaceIndex = settings.derive(
    ({ config }) => new Map(config.workspaces.map((workspace) => [workspace.identifier, workspace])),
  );
  const routeTable = settings.derive(({ config }) =>
    createRouteTable(config.workspaces, config.auth.senderAuthentication),
  );
  const workspaces: UploadWorkspaces = { get: (identifier) => workspaceIndex().get(identifier) };

  try {
    const redis = redisTarget(options.redisUrl, config.redis);
    const outage = createRedisOutageLog({ logger });
    // The sessions' small commands of one event-loop turn go out in one write. The queues'
    // connection below sends BullMQ's commands as BullMQ issues them.
    const intakeRedis = createIntakeConnection(redis, outage, 'intake', { gatherCommands: true });
    lifecycle.onClose('redis', () => closeConnection(intakeRedis));
    const durability = await checkDurability(intakeRedis, config, logger);
    // BullMQ defines its ~50 scripts as commands on the connection its queues are given, and
    // ioredis copies every such command onto each MULTI it builds on that connection: the
    // intake's commit, one per message, would pay for it (2% of its CPU at 100 KB). The
    // queues get a connection of their own, with the intake's fail-fast settings.
    const queueRedis = createIntakeConnection(redis, outage, 'queue');
    lifecycle.onClose('redis (queues)', () => closeConnection(queueRedis));
    const ledger = createMessageLedger(intakeRedis, keys, config.retention.messages);
    const index = createMessageIndex(intakeRedis, keys, config.retention.messages);
    warnUnidentifiable(config.workspaces, logger);
    // The HTTP API lists and retries failed uploads in every role, so it has a handle on the
    // upload queue of its own (a Queue holds no connection or loop beyond the one it is given).
    const uploadQueue = createUploadQueue({
      connection: queueRedis,
      keys,
      attempts: config.upload.attempts,
      retention: config.retention,
    });
    uploadQueue.on(
      'error',
      (err) => outage.absorbs(err) || logger.error({ err }, 'upload queue error (HTTP API)'),
    );
    lifecycle.onClose('upload queue (HTTP API)', () => uploadQueue.close());
    // Read at each scrape, in every role: the queue is shared by the instances on this Redis.
    const queueDepth = createQueueDepthReader({ connection: queueRedis, keys, logger });
    lifecycle.onClose('queue depth', () => queueDepth.close());
    metrics.observe({ redisUp: () => intakeRedis.status === 'ready', queueDepth: () => queueDepth.read() });
    // The console's queue overview and Bull Board show completion tracking too.
    const completionQueue = createCompletionQueue({ connection: queueRedis, keys });
    completionQueue.on(
      'error',
      (err) => outage.absorbs(err) || logger.error({ err }, 'completion queue error (HTTP API)'),
    );
    lifecycle.onClose('completion queue (HTTP API)', () => completionQueue.close());

    let worker: UploadWorker | undefined;
    let smtp: SmtpIntake | undefined;
    // The HTTP API starts first: the sourceEmail links point at it, and readiness answers
    // while the rest starts and stops.
    const http: HttpApi = createHttpApi({
      redis: intakeRedis,
      keys,
      ledger,
      index,
      failedUploads: createFailedUploads({ queue: uploadQueue, redis: intakeRedis, keys, ledger }),
      metrics,
      logger,
      readiness: () => readiness(intakeRedis, durability, smtp, worker),
      token: config.http.token ?? null,
      publicUrl: config.http.publicUrl ?? null,
      allowReset: config.http.allowReset,
      queues: [uploadQueue, completionQueue],
      // Waits out a Redis restart like a worker's connection; closed with the HTTP API.
      subscriber: () => createWorkerConnection(redis, outage, 'settled'),
    });
    const { url: httpUrl } = await lifecycle.start('http', {
      start: () => http.start(config.http.host, config.http.port),
      close: () => http.close(),
    });

    const context: RoleContext = {
      config,
      settings,
      lifecycle,
      logger,
      metrics,
      keys,
      ledger,
      index,
      redis,
      intakeRedis,
      queueRedis,
      outage,
      durability,
      ...(options.random ? { random: options.random } : {}),
      ...(options.resolver ? { resolver: options.resolver } : {}),
    };
    // Each role's modules load only in a process that runs it: an SMTP-only daemon never loads
    // the uploader and the parsing API's HTTP client (undici), a worker never smtp-server and
    // the MIME walk.
    if (role === 'all' || role === 'worker') {
      const { startUploadRole } = await import('./roles/upload-role.ts');
      worker = await startUploadRole(context, workspaces);
    }
    let smtpPort: number | null = null;
    if (role === 'all' || role === 'smtp') {
      const { startIntakeRole } = await import('./roles/intake-role.ts');
      const started = await startIntakeRole(context, routeTable, config.http.publicUrl ?? httpUrl);
      smtp = started.smtp;
      smtpPort = started.port;
    }

    settings.onChange((next) => {
      warnUnidentifiable(next.config.workspaces, logger);
      logger.info(
        { workspaces: next.config.workspaces.length },
        'configuration reloaded: API key, base URL and workspaces; other settings take effect at the next start',
      );
    });

    return {
      smtpPort,
      httpUrl,
      durability,
      settings,
      async close() {
        await lifecycle.close();
      },
    };
  } catch (err) {
    await lifecycle.close();
    throw err;
  }
}

/** Workspaces whose customIdentifier template cannot tell a retry what an earlier attempt uploaded. */
function warnUnidentifiable(workspaces: readonly WorkspaceConfig[], logger: Logger): void {
  for (const workspace of workspaces) {
    if (identifiesOneUpload(workspace)) continue;
    logger.warn(
      { workspace: workspace.identifier },
      'upload.customIdentifier does not name one upload (it lacks {queueId} or {attachmentIndex}): ' +
        'a retry after a lost answer cannot find the earlier document, so it may be uploaded twice',
    );
  }
}

async function readiness(
  redis: RedisClient,
  durability: Durability,
  smtp: SmtpIntake | undefined,
  worker: UploadWorker | undefined,
): Promise<Readiness> {
  const redisOk = await redis.ping().then(
    (reply) => reply === 'PONG',
    () => false,
  );
  const smtpOk = smtp ? smtp.listening : null;
  const workerOk = worker ? worker.running && worker.pausedReason === null : null;
  return {
    ready: redisOk && smtpOk !== false && workerOk !== false && (smtpOk === true || workerOk === true),
    details: {
      redis: redisOk ? 'ok' : 'unreachable',
      smtp: smtpOk === null ? 'not in this role' : smtpOk ? 'listening' : 'stopped',
      worker:
        workerOk === null ? 'not in this role' : (worker?.pausedReason ?? (workerOk ? 'running' : 'stopped')),
      durability: {
        aof: durability.aof,
        maxmemoryPolicy: durability.maxmemoryPolicy,
        redisVersion: durability.version,
        waitAof: durability.waitAof,
        warnings: durability.warnings,
      },
    },
  };
}

/**
 * Waits for Redis, then refuses one that may evict accepted mail (DESIGN.md, Durability) and
 * says in the log what a 250 survives.
 */
async function checkDurability(
  redis: RedisClient,
  config: GatewayConfig,
  logger: Logger,
): Promise<Durability> {
  await waitReady(redis);
  const { durability, refusal } = assessNodes(await readRedisFacts(redis), config.redis);
  if (refusal) throw new Error(refusal);
  const { aof, maxmemoryPolicy, version, waitAof } = durability;
  logger.info({ aof, maxmemoryPolicy, redisVersion: version, waitAof }, 'redis durability');
  for (const warning of durability.warnings) logger.warn(warning);
  return durability;
}

async function waitReady(redis: RedisClient): Promise<void> {
  if (redis.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('redis did not become ready within 10 s')), 10_000);
    redis.once('ready', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
