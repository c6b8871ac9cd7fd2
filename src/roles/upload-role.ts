import type { Queue } from 'bullmq';
import { asError } from '../errors.ts';
import { createParsingApiClient, type ParsingApiClient } from '../parsing-api/parsing-api-client.ts';
import { createResthookClient } from '../parsing-api/resthook-client.ts';
import { createSwitchableClient, type SwitchableClient } from '../parsing-api/switchable-client.ts';
import type { CompletionJobData } from '../queue/completion-queue.ts';
import { openQueues } from '../queue/queues.ts';
import { closeConnection, createWorkerConnection } from '../redis/connections.ts';
import { createRecordReconciler } from '../uploader/reconcile-records.ts';
import { createResthookSubscriber } from '../uploader/resthook-subscriber.ts';
import { createRetryPromotion } from '../uploader/retry-promotion.ts';
import { createCompletionWorker } from '../uploader/track-completion.ts';
import type { UploadWorkspaces } from '../uploader/upload-settings-schema.ts';
import { createUploadWorker, type UploadWorker } from '../uploader/upload-worker.ts';
import { noticeTrigger, startNotices } from './notice-role.ts';
import { queueSettings } from './queue-settings.ts';
import type { RoleContext, RunningSettings } from './role-context.ts';
import { startWebhooks } from './webhook-role.ts';

/**
 * The worker role: the parsing-API client a reload re-keys, completion tracking when a
 * workspace asks for it, and the upload workers, each registered on the lifecycle as it
 * starts (so they close in reverse: uploads, then completion, then the client).
 */
export async function startUploadRole(
  context: RoleContext,
  workspaces: UploadWorkspaces,
  /** Base URL of the record API, for the links in webhook payloads. */
  publicUrl: string,
): Promise<UploadWorker> {
  const { config, settings, lifecycle, logger, keys, ledger, redis, outage } = context;
  const apiClient = ({ config: next, apiBaseUrl, apiKey }: RunningSettings): ParsingApiClient =>
    createParsingApiClient({
      baseUrl: apiBaseUrl,
      apiKey,
      allowInsecureHttp: next.api.allowInsecureHttp,
      timeoutMs: next.api.timeout,
      connections: next.upload.concurrency,
      logger,
    });
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
  const workerRedis = createWorkerConnection(redis, outage);
  lifecycle.onClose('worker redis', () => closeConnection(workerRedis));
  // The worker takes jobs on its own connection and writes the records on the intake's.
  context.connections.need('worker', workerRedis);
  context.connections.need('intake', context.intakeRedis);
  // The worker's queues wait out a Redis restart with its connection. Closed after every
  // worker: the upload worker schedules completion polls, the reconciler reads finished jobs.
  const queues = openQueues({
    connection: workerRedis,
    keys,
    ...queueSettings(config),
    logger,
    outage,
    user: 'worker',
  });
  lifecycle.onClose('worker queues', () => queues.close());
  const announcer = await startWebhooks(context, queues, publicUrl);
  await startNotices(context);
  const notices = noticeTrigger(context, queues);

  // Completion tracking (workspaces[].trackCompletion): its queue, fed by the upload worker,
  // and its poller, started before the uploads and closed after them.
  let completion: Queue<CompletionJobData> | undefined;
  if (config.workspaces.some((workspace) => workspace.trackCompletion)) {
    const completionRedis = createWorkerConnection(redis, outage, 'completion');
    lifecycle.onClose('completion redis', () => closeConnection(completionRedis));
    context.connections.need('completion', completionRedis);
    const poller = createCompletionWorker({
      outage,
      connection: completionRedis,
      keys,
      ledger,
      client,
      workspaces,
      metrics: context.metrics,
      logger,
      closeTimeout: config.upload.closeTimeout,
      ...(announcer ? { announcer } : {}),
    });
    await lifecycle.start('completion worker', poller);
    completion = queues.completion;
  }
  startResthookSubscriptions(context, publicUrl);

  const uploads = queues.uploads;
  const promotion = config.upload.promoteAfterRecovery
    ? createRetryPromotion({
        logger,
        async promote() {
          const waiting = await uploads.getDelayedCount();
          if (waiting > 0) await uploads.promoteJobs();
          return waiting;
        },
      })
    : undefined;
  const worker = createUploadWorker({
    outage,
    connection: workerRedis,
    redis: context.intakeRedis,
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
    requestTimeoutMs: config.api.timeout,
    keyGeneration: () => client.generation,
    metrics: context.metrics,
    logger,
    ...(context.random ? { random: context.random } : {}),
    ...(completion ? { completion } : {}),
    ...(announcer ? { announcer } : {}),
    ...(notices ? { notices } : {}),
    ...(promotion ? { promotion } : {}),
  });
  await lifecycle.start('upload worker', worker);
  context.metrics.observe({ uploadsPaused: () => (worker.pausedReason === null ? null : 'api_key_refused') });
  // The records follow the finished jobs even when a crash cut the job's own write short.
  await lifecycle.start('record reconciler', createRecordReconciler({ queue: uploads, ledger, logger }));
  // Paused because the service refused the key: the reload may bring the right one.
  settings.onChange(() => worker.resume());
  return worker;
}

/**
 * trackCompletion via resthook: the subscriptions to the service's parse events, made now and
 * brought in line at each reload (a workspace added, dropped or switched to polling). Runs in
 * the background: a service or target not reachable yet is retried, and polling settles the
 * documents meanwhile.
 */
function startResthookSubscriptions(context: RoleContext, publicUrl: string): void {
  const { settings, logger, keys, lifecycle } = context;
  const targetUrl = `${publicUrl.replace(/\/$/, '')}/v1/resthooks`;
  const subscriber = createResthookSubscriber({
    redis: context.intakeRedis,
    keys,
    logger,
    client: () => {
      const { config, apiBaseUrl, apiKey } = settings.current();
      return createResthookClient({
        baseUrl: apiBaseUrl,
        apiKey,
        allowInsecureHttp: config.api.allowInsecureHttp,
        timeoutMs: config.api.timeout,
        logger,
      });
    },
    wanted: () => {
      const { config, apiBaseUrl } = settings.current();
      return config.workspaces
        .filter((workspace) => workspace.trackCompletion?.via === 'resthook')
        .map((workspace) => ({ workspace: workspace.identifier, targetUrl, apiBaseUrl }));
    },
  });
  lifecycle.onClose('resthook subscriptions', () => subscriber.close());
  subscriber.sync();
  settings.onChange(() => subscriber.sync());
}
