import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { createSenderAuthenticator } from './auth/authenticate-sender.ts';
import { createDnsResolver, type DnsResolver } from './auth/dns-resolver.ts';
import { createRouteTable } from './config/route-table.ts';
import type { GatewayConfig, WorkspaceConfig } from './config/schema.ts';
import { asError } from './errors.ts';
import { createHttpApi, type HttpApi, type Readiness } from './http/create-http-api.ts';
import { createMetrics, type GatewayMetrics } from './http/metrics.ts';
import type { Logger } from './logger.ts';
import { createKeySpace } from './queue/keys.ts';
import { createMessageLedger } from './queue/message-ledger.ts';
import { createProducer } from './queue/producer.ts';
import {
  closeConnection,
  createIntakeConnection,
  createWorkerConnection,
  redisTarget,
} from './queue/redis-connections.ts';
import { assessDurability, type Durability, readRedisFacts } from './queue/redis-durability.ts';
import { createUploadQueue, type UploadJobData } from './queue/upload-queue.ts';
import { createSmtpIntake, type SmtpIntake } from './smtp/create-smtp-server.ts';
import { createRateLimiter } from './smtp/rate-limit.ts';
import { createMessageReceiver } from './smtp/receive-message.ts';
import { loadStartTlsOptions } from './smtp/tls-options.ts';
import { type CompletionJobData, createCompletionQueue } from './uploader/completion-queue.ts';
import { createParsingApiClient, type ParsingApiClient } from './uploader/parsing-api-client.ts';
import { createSwitchableClient, type SwitchableClient } from './uploader/switchable-client.ts';
import { createCompletionWorker } from './uploader/track-completion.ts';
import { identifiesOneUpload } from './uploader/upload-identity.ts';
import { createUploadWorker, type UploadWorker } from './uploader/upload-worker.ts';

export type Role = 'all' | 'smtp' | 'worker';

export interface GatewayOptions {
  config: GatewayConfig;
  role: Role;
  logger: Logger;
  /** The Redis to use (the composition root may have started a private one). */
  redisUrl: string;
  /** Where uploads go: the configured service, or the in-process mock's URL. */
  apiBaseUrl: string;
  apiKey: string;
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
   * Applies a reloaded configuration (SIGHUP): the parsing-API key and base URL, and the
   * workspaces (routes, allow-lists, upload fields). A worker paused because the service
   * refused the key resumes. Listeners, Redis and limits need a restart; say so.
   */
  reload(next: { config: GatewayConfig; apiBaseUrl: string; apiKey: string }): void;
  /** Stops intake first, then the workers, then the HTTP API and Redis. Idempotent. */
  close(): Promise<void>;
}

/**
 * Builds and starts the daemon's components for one role, wiring each from its factory. Reads
 * no environment and never exits: src/main.ts does that.
 */
export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const { config, role, logger } = options;
  const metrics = options.metrics ?? createMetrics();
  const keys = createKeySpace(config.redis.prefix);
  const steps: Array<{ name: string; close: () => Promise<void> }> = [];
  let closing: Promise<void> | undefined;

  async function close(): Promise<void> {
    closing ??= (async () => {
      for (const step of steps.reverse()) {
        try {
          await step.close();
        } catch (err) {
          logger.error({ err: asError(err), step: step.name }, 'shutdown step failed');
        }
      }
    })();
    return closing;
  }

  try {
    const redis = redisTarget(options.redisUrl, config.redis);
    const intakeRedis = createIntakeConnection(redis, logger);
    steps.push({ name: 'redis', close: () => closeConnection(intakeRedis) });
    await waitReady(intakeRedis);
    const { durability, refusal } = assessDurability(await readRedisFacts(intakeRedis), config.redis);
    if (refusal) throw new Error(refusal);
    const { aof, maxmemoryPolicy, version, waitAof } = durability;
    logger.info({ aof, maxmemoryPolicy, redisVersion: version, waitAof }, 'redis durability');
    for (const warning of durability.warnings) logger.warn(warning);

    const ledger = createMessageLedger(intakeRedis, keys, config.retention.messages);
    const workspaces = new Map<string, WorkspaceConfig>(config.workspaces.map((ws) => [ws.identifier, ws]));
    warnUnidentifiable(config.workspaces, logger);

    let routeTable: ReturnType<typeof createRouteTable> | undefined;
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
    steps.push({ name: 'http', close: () => http.close() });
    const { url: httpUrl } = await http.start(config.http.host, config.http.port);

    const apiClient = (apiConfig: GatewayConfig, baseUrl: string, apiKey: string): ParsingApiClient =>
      createParsingApiClient({
        baseUrl,
        apiKey,
        allowInsecureHttp: apiConfig.api.allowInsecureHttp,
        timeoutMs: apiConfig.api.timeout,
        connections: apiConfig.upload.concurrency,
        logger,
      });
    let client: SwitchableClient | undefined;
    if (role === 'all' || role === 'worker') {
      const switchable = createSwitchableClient(apiClient(config, options.apiBaseUrl, options.apiKey));
      client = switchable;
      // Closed after both workers: what is still in flight then was handed back to the queue
      // (upload.closeTimeout), so it is cut off rather than waited for.
      steps.push({ name: 'api client', close: () => switchable.destroy() });
      const workerRedis = createWorkerConnection(redis, logger);
      steps.push({ name: 'worker redis', close: () => closeConnection(workerRedis) });
      // Completion tracking (workspaces[].trackCompletion): its queue, fed by the upload
      // worker, and its poller, started before the uploads and closed after them.
      let completion: Queue<CompletionJobData> | undefined;
      if (config.workspaces.some((workspace) => workspace.trackCompletion)) {
        const queue = createCompletionQueue({ connection: workerRedis, keys });
        queue.on('error', (err) => logger.error({ err }, 'completion queue error'));
        steps.push({ name: 'completion queue', close: () => queue.close() });
        const completionRedis = createWorkerConnection(redis, logger, 'completion');
        steps.push({ name: 'completion redis', close: () => closeConnection(completionRedis) });
        const poller = createCompletionWorker({
          connection: completionRedis,
          keys,
          ledger,
          client,
          workspaces,
          logger,
          closeTimeout: config.upload.closeTimeout,
        });
        steps.push({ name: 'completion worker', close: () => poller.close() });
        await poller.start();
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
        keyGeneration: () => switchable.generation,
        metrics,
        logger,
        ...(options.random ? { random: options.random } : {}),
        ...(completion ? { completion } : {}),
      });
      steps.push({ name: 'upload worker', close: () => started.close() });
      await started.start();
      worker = started;
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
      steps.push({ name: 'upload queue', close: () => queue.close() });
      const producer = createProducer({
        redis: intakeRedis,
        keys,
        queue,
        ledger,
        logger,
        messageTtlSeconds: config.retention.messages,
        waitAofTimeout: durability.waitAof ? config.redis.waitAofTimeout : null,
      });
      routeTable = createRouteTable(config.workspaces);
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
        config,
        redis: intakeRedis,
        keys,
        producer,
        publicUrl: config.http.publicUrl ?? httpUrl,
        authenticator: createSenderAuthenticator({
          resolver: options.resolver ?? createDnsResolver(config.dns),
          hostname: config.smtp.hostname,
        }),
        logger,
      });
      const intake = createSmtpIntake({
        config,
        routes: { lookup: (recipient) => routeTable?.route(recipient) },
        receive,
        logger,
        onOutcome: (outcome, code) => metrics.smtpMessages.inc({ outcome, code: String(code) }),
        rateLimiter: createRateLimiter({
          redis: intakeRedis,
          prefix: config.redis.prefix,
          limits: config.smtp.rateLimit,
          logger,
        }),
        tls: await loadStartTlsOptions(config.smtp.tls),
      });
      steps.push({ name: 'smtp', close: () => intake.close() });
      smtpPort = (await intake.start()).port;
      smtp = intake;
    }

    function reload(next: { config: GatewayConfig; apiBaseUrl: string; apiKey: string }): void {
      void client?.replace(apiClient(next.config, next.apiBaseUrl, next.apiKey));
      workspaces.clear();
      for (const workspace of next.config.workspaces) workspaces.set(workspace.identifier, workspace);
      warnUnidentifiable(next.config.workspaces, logger);
      if (routeTable) routeTable = createRouteTable(next.config.workspaces);
      worker?.resume();
      logger.info(
        { workspaces: next.config.workspaces.length },
        'configuration reloaded: API key, base URL and workspaces; other settings take effect at the next start',
      );
    }

    return { smtpPort, httpUrl, durability, reload, close };
  } catch (err) {
    await close();
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
