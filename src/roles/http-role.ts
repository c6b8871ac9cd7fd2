import type { RouteView } from '../http/console/routes-page.ts';
import { createHttpApi, type Readiness } from '../http/create-http-api.ts';
import { createSenderAllowing } from '../queue/allow-sender.ts';
import type { EventAnnouncer } from '../queue/announce-events.ts';
import { createHeldMail } from '../queue/held-mail.ts';
import { createQueueDepthReader } from '../queue/queue-depth.ts';
import { createAllowedSenders } from '../record/allowed-senders.ts';
import { createRefusalReader } from '../record/refusal-log.ts';
import { createWorkerConnection } from '../redis/connections.ts';
import type { Durability } from '../redis/durability.ts';
import type { NeededConnections } from '../redis/needed-connections.ts';
import type { ScanSettings } from '../scan/scan-settings-schema.ts';
import { checkScanners } from '../scan/scanner-health.ts';
import type { SmtpIntake } from '../smtp/create-smtp-server.ts';
import { createFailedUploads } from '../uploader/failed-uploads.ts';
import { createResthookReceiver } from '../uploader/resthook-receiver.ts';
import type { UploadWorker } from '../uploader/upload-worker.ts';
import { createFailedDeliveries } from '../webhooks/failed-deliveries.ts';
import type { RoleContext } from './role-context.ts';
import { webhookAnnouncer } from './webhook-announcer.ts';

/** The other roles as readiness sees them: each undefined until it has started, or in no role. */
export interface RunningRoles {
  smtp(): SmtpIntake | undefined;
  worker(): UploadWorker | undefined;
  /** The route table in force, for the console. */
  routes?(): RouteView;
}

/**
 * The HTTP role, in every process: the record API, the console, health, readiness and
 * metrics (with the upload queue's depth, read at each scrape: the queue is shared by the
 * instances on this Redis). It starts before the other roles, since the sourceEmail links
 * point at it and readiness answers while the rest starts and stops. Returns its URL.
 */
export async function startHttpRole(context: RoleContext, roles: RunningRoles): Promise<string> {
  const { config, lifecycle, logger, metrics, keys, ledger, index, intakeRedis, queues, durability } =
    context;
  const queueDepth = createQueueDepthReader({ queue: queues.uploads, logger });
  // The HTTP API answers from the intake connection.
  context.connections.need('intake', intakeRedis);
  metrics.observe({ redisUp: () => intakeRedis.status === 'ready', queueDepth: () => queueDepth.read() });
  let listening = `http://${config.http.host}:${config.http.port}`;
  // The links in the events name this server, known once it listens.
  const announcer: EventAnnouncer = {
    announce: (announcement) =>
      webhookAnnouncer(context, queues, config.http.publicUrl ?? listening).announce(announcement),
  };
  const http = createHttpApi({
    redis: intakeRedis,
    keys,
    ledger,
    index,
    failedUploads: createFailedUploads({ queue: queues.uploads, redis: intakeRedis, keys, ledger }),
    heldMail: createHeldMail({
      redis: intakeRedis,
      keys,
      ledger,
      queue: queues.uploads,
      messageTtlSeconds: config.retention.messages,
      announcer,
      allowing: createSenderAllowing({
        allowed: createAllowedSenders(intakeRedis, keys),
        service: () => {
          const { config: current, apiBaseUrl, apiKey } = context.settings.current();
          return {
            baseUrl: apiBaseUrl,
            apiKey,
            allowInsecureHttp: current.api.allowInsecureHttp,
            timeoutMs: current.api.timeout,
          };
        },
        logger,
      }),
      logger,
    }),
    failedDeliveries: createFailedDeliveries(() => queues.webhooks),
    refusals: createRefusalReader(intakeRedis, keys, config.retention.refusals),
    metrics,
    logger,
    readiness: () => readiness(context.connections, durability, roles.smtp(), roles.worker(), config.scan),
    token: config.http.token ?? null,
    publicUrl: config.http.publicUrl ?? null,
    allowReset: config.http.allowReset,
    // The console's queue overview and Bull Board show completion tracking too.
    queues: [queues.uploads, queues.completion],
    ...(roles.routes ? { routes: () => roles.routes?.() ?? { discovery: null, routes: [] } } : {}),
    // Waits out a Redis restart like a worker's connection; closed with the HTTP API.
    subscriber: () => createWorkerConnection(context.redis, context.outage, 'settled'),
    // Any instance behind http.publicUrl may receive the service's parse events.
    resthooks: createResthookReceiver({
      redis: intakeRedis,
      keys,
      ledger,
      announcer,
      metrics,
      completion: queues.completion,
      logger,
    }),
  });
  const { url } = await lifecycle.start('http', {
    start: () => http.start(config.http.host, config.http.port),
    close: () => http.close(),
  });
  listening = url;
  return url;
}

/**
 * Ready when every connection the running roles need is ready and answers, and a role that
 * takes work runs: the intake listening, the worker running and not paused.
 */
async function readiness(
  connections: NeededConnections,
  durability: Durability,
  smtp: SmtpIntake | undefined,
  worker: UploadWorker | undefined,
  scan: ScanSettings,
): Promise<Readiness> {
  // The intake waits for the scanners' verdicts: without them it answers 451 (or, with
  // scan.unavailable: accept, takes mail unscanned), so a scanner that does not answer makes it unready.
  const [states, scanners] = await Promise.all([
    connections.check(),
    smtp ? checkScanners(scan) : Promise.resolve({}),
  ]);
  const redisOk = Object.values(states).every((state) => state === 'ready');
  const smtpOk = smtp ? smtp.listening : null;
  const workerOk = worker ? worker.running && worker.pausedReason === null : null;
  const scannersOk = Object.values(scanners).every((state) => state === 'ok');
  return {
    ready:
      redisOk &&
      scannersOk &&
      smtpOk !== false &&
      workerOk !== false &&
      (smtpOk === true || workerOk === true),
    details: {
      ...(Object.keys(scanners).length > 0 ? { scanners } : {}),
      redis: redisOk ? 'ok' : 'unreachable',
      connections: states,
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
