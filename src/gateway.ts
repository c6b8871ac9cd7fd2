import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { GatewayConfig, WorkspaceConfig } from './config/schema.ts';
import { asError } from './errors.ts';
import { createHttpApi, type HttpApi, type Readiness } from './http/create-http-api.ts';
import { createMessageReceiver } from './intake/receive-message.ts';
import { createRouteTable } from './intake/route-table.ts';
import { createLifecycle, type Lifecycle } from './lifecycle.ts';
import { createLiveSettings, type LiveSettings } from './live-settings.ts';
import type { Logger } from './logger.ts';
import { createMetrics, type GatewayMetrics } from './metrics.ts';
import { createParsingApiClient, type ParsingApiClient } from './parsing-api/parsing-api-client.ts';
import { createSwitchableClient, type SwitchableClient } from './parsing-api/switchable-client.ts';
import { createProducer } from './queue/producer.ts';
import { createQueueDepthReader } from './queue/queue-depth.ts';
import {
  closeConnection,
  createIntakeConnection,
  createWorkerConnection,
  redisTarget,
} from './queue/redis-connections.ts';
import { assessDurability, type Durability, readRedisFacts } from './queue/redis-durability.ts';
import { createUploadQueue, type UploadJobData } from './queue/upload-queue.ts';
import { createKeySpace } from './record/keys.ts';
import { createMessageLedger } from './record/message-ledger.ts';
import { createSenderAuthenticator } from './sender/authenticate-sender.ts';
import { createDnsResolver, type DnsResolver } from './sender/dns-resolver.ts';
import { createSmtpIntake, type SmtpIntake } from './smtp/create-smtp-server.ts';
import { createRateLimiter } from './smtp/rate-limit.ts';
import { loadStartTlsOptions } from './smtp/tls-options.ts';
import { type CompletionJobData, createCompletionQueue } from './uploader/completion-queue.ts';
import { createCompletionWorker } from './uploader/track-completion.ts';
import { identifiesOneUpload } from './uploader/upload-identity.ts';
import type { UploadWorkspaces } from './uploader/upload-settings-schema.ts';
import { createUploadWorker, type UploadWorker } from './uploader/upload-worker.ts';

export type Role = 'all' | 'smtp' | 'worker';

/**
 * What a reload (SIGHUP) replaces: the configuration, and where uploads go with which key.
 * The parsing-API key and base URL and the workspaces (routes, allow-lists, upload fields,
 * completion tracking) take effect at once; listeners, Redis and limits at the next start.
 */
export interface RunningSettings {
  readonly config: GatewayConfig;
  /** The configured service, or the in-process mock's URL. */
  readonly apiBaseUrl: string;
  readonly apiKey: string;
}

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
    const intakeRedis = createIntakeConnection(redis, logger);
    lifecycle.onClose('redis', () => closeConnection(intakeRedis));
    await waitReady(intakeRedis);
    const { durability, refusal } = assessDurability(await readRedisFacts(intakeRedis), config.redis);
    if (refusal) throw new Error(refusal);
    const { aof, maxmemoryPolicy, version, waitAof } = durability;
    logger.info({ aof, maxmemoryPolicy, redisVersion: version, waitAof }, 'redis durability');
    for (const warning of durability.warnings) logger.warn(warning);

    const ledger = createMessageLedger(intakeRedis, keys, config.retention.messages);
    warnUnidentifiable(config.workspaces, logger);
    // Read at each scrape, in every role: the queue is shared by the instances on this Redis.
    const queueDepth = createQueueDepthReader({ connection: intakeRedis, keys, logger });
    lifecycle.onClose('queue depth', () => queueDepth.close());
    metrics.observe({ redisUp: () => intakeRedis.status === 'ready', queueDepth: () => queueDepth.read() });

    let worker: UploadWorker | undefined;
    let smtp: SmtpIntake | undefined;
    // The HTTP API starts first: the sourceEmail links point at it, and readiness answers
    // while the rest starts and stops.
    const http: HttpApi = createHttpApi({
      redis: intakeRedis,
      keys,
      ledger,
      metrics,
      logger,
      readiness: () => readiness(intakeRedis, durability, smtp, worker),
      token: config.http.token ?? null,
    });
    const { url: httpUrl } = await lifecycle.start('http', {
      start: () => http.start(config.http.host, config.http.port),
      close: () => http.close(),
    });

    const apiClient = ({ config: next, apiBaseUrl, apiKey }: RunningSettings): ParsingApiClient =>
      createParsingApiClient({
        baseUrl: apiBaseUrl,
        apiKey,
        allowInsecureHttp: next.api.allowInsecureHttp,
        timeoutMs: next.api.timeout,
        connections: next.upload.concurrency,
        logger,
      });
    if (role === 'all' || role === 'worker') {
      // The workers hold this client; a reload swaps the one beneath it.
      const client: SwitchableClient = createSwitchableClient(apiClient(settings.current()));
      settings.onChange((next) => {
        client.replace(apiClient(next)).catch((err: unknown) => {
          logger.warn({ err: asError(err) }, 'the client of the previous API key did not close cleanly');
        });
      });
      // Closed after both workers: what is still in flight then was handed back to the queue
      // (upload.closeTimeout), so it is cut off rather than waited for.
      lifecycle.onClose('api client', () => client.destroy());
      const workerRedis = createWorkerConnection(redis, logger);
      lifecycle.onClose('worker redis', () => closeConnection(workerRedis));
      // Completion tracking (workspaces[].trackCompletion): its queue, fed by the upload
      // worker, and its poller, started before the uploads and closed after them.
      let completion: Queue<CompletionJobData> | undefined;
      if (config.workspaces.some((workspace) => workspace.trackCompletion)) {
        const queue = createCompletionQueue({ connection: workerRedis, keys });
        queue.on('error', (err) => logger.error({ err }, 'completion queue error'));
        lifecycle.onClose('completion queue', () => queue.close());
        const completionRedis = createWorkerConnection(redis, logger, 'completion');
        lifecycle.onClose('completion redis', () => closeConnection(completionRedis));
        const poller = createCompletionWorker({
          connection: completionRedis,
          keys,
          ledger,
          client,
          workspaces,
          metrics,
          logger,
        });
        await lifecycle.start('completion worker', poller);
        completion = queue;
      }
      const started = createUploadWorker({
        connection: workerRedis,
        redis: intakeRedis,
        keys,
        ledger,
        client,
        workspaces,
        concurrency: config.upload.concurrency,
        attempts: config.upload.attempts,
        retryBaseDelay: config.upload.retryBaseDelay,
        retryMaxDelay: config.upload.retryMaxDelay,
        stalledAfter: config.upload.stalledAfter,
        closeTimeout: config.upload.closeTimeout,
        maxStalls: config.upload.maxStalls,
        keyGeneration: () => client.generation,
        metrics,
        logger,
        ...(options.random ? { random: options.random } : {}),
        ...(completion ? { completion } : {}),
      });
      await lifecycle.start('upload worker', started);
      worker = started;
      metrics.observe({ uploadsPaused: () => (started.pausedReason === null ? null : 'api_key_refused') });
      // Paused because the service refused the key: the reload may bring the right one.
      settings.onChange(() => started.resume());
    }

    let smtpPort: number | null = null;
    if (role === 'all' || role === 'smtp') {
      const queue: Queue<UploadJobData> = createUploadQueue({
        connection: intakeRedis,
        keys,
        attempts: config.upload.attempts,
        retention: config.retention,
      });
      queue.on('error', (err) => logger.error({ err }, 'upload queue error'));
      lifecycle.onClose('upload queue', () => queue.close());
      const producer = createProducer({
        redis: intakeRedis,
        keys,
        queue,
        ledger,
        logger,
        messageTtlSeconds: config.retention.messages,
        waitAofTimeout: durability.waitAof ? config.redis.waitAofTimeout : null,
      });
      const forgeable = config.workspaces
        .filter((ws) => (ws.whitelistIngestAddresses ?? []).length > 0)
        .filter((ws) => (ws.senderAuthentication ?? config.auth.senderAuthentication) === 'off')
        .map((ws) => ws.identifier);
      if (forgeable.length > 0) {
        logger.warn(
          { workspaces: forgeable },
          'allow-lists without sender authentication: anyone can forge an allowed From; set auth.senderAuthentication: aligned',
        );
      }
      const receive = createMessageReceiver({
        limits: config.smtp,
        auth: config.auth,
        redis: intakeRedis,
        keys,
        producer,
        publicUrl: config.http.publicUrl ?? httpUrl,
        authenticator: createSenderAuthenticator({
          resolver: options.resolver ?? createDnsResolver(config.dns),
          hostname: config.smtp.hostname,
        }),
        metrics,
        logger,
      });
      const intake = createSmtpIntake({
        settings: config.smtp,
        routes: { lookup: (recipient) => routeTable().route(recipient) },
        receive,
        logger,
        onOutcome: (outcome, code) => metrics.smtpMessages.inc({ outcome, code: String(code) }),
        metrics,
        rateLimiter: createRateLimiter({
          redis: intakeRedis,
          prefix: config.redis.prefix,
          limits: config.smtp.rateLimit,
          logger,
          metrics,
        }),
        tls: await loadStartTlsOptions(config.smtp.tls),
      });
      smtpPort = (await lifecycle.start('smtp', intake)).port;
      smtp = intake;
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
  redis: Redis,
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

async function waitReady(redis: Redis): Promise<void> {
  if (redis.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('redis did not become ready within 10 s')), 10_000);
    redis.once('ready', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
