import type { Queue } from 'bullmq';
import { asError } from '../errors.ts';
import { createParsingApiClient, type ParsingApiClient } from '../parsing-api/parsing-api-client.ts';
import { createSwitchableClient, type SwitchableClient } from '../parsing-api/switchable-client.ts';
import { closeConnection, createWorkerConnection } from '../queue/redis-connections.ts';
import { createUploadQueue } from '../queue/upload-queue.ts';
import { type CompletionJobData, createCompletionQueue } from '../uploader/completion-queue.ts';
import { createRecordReconciler } from '../uploader/reconcile-records.ts';
import { createCompletionWorker } from '../uploader/track-completion.ts';
import type { UploadWorkspaces } from '../uploader/upload-settings-schema.ts';
import { createUploadWorker, type UploadWorker } from '../uploader/upload-worker.ts';
import type { RoleContext, RunningSettings } from './role-context.ts';

/**
 * The worker role: the parsing-API client a reload re-keys, completion tracking when a
 * workspace asks for it, and the upload workers, each registered on the lifecycle as it
 * starts (so they close in reverse: uploads, then completion, then the client).
 */
export async function startUploadRole(
  context: RoleContext,
  workspaces: UploadWorkspaces,
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

  // Completion tracking (workspaces[].trackCompletion): its queue, fed by the upload worker,
  // and its poller, started before the uploads and closed after them.
  let completion: Queue<CompletionJobData> | undefined;
  if (config.workspaces.some((workspace) => workspace.trackCompletion)) {
    const queue = createCompletionQueue({ connection: workerRedis, keys });
    queue.on('error', (err) => outage.absorbs(err) || logger.error({ err }, 'completion queue error'));
    lifecycle.onClose('completion queue', () => queue.close());
    const completionRedis = createWorkerConnection(redis, outage, 'completion');
    lifecycle.onClose('completion redis', () => closeConnection(completionRedis));
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
    });
    await lifecycle.start('completion worker', poller);
    completion = queue;
  }

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
  });
  await lifecycle.start('upload worker', worker);
  context.metrics.observe({ uploadsPaused: () => (worker.pausedReason === null ? null : 'api_key_refused') });
  // The records follow the finished jobs even when a crash cut the job's own write short.
  const finishedJobs = createUploadQueue({
    connection: workerRedis,
    keys,
    attempts: config.upload.attempts,
    retention: config.retention,
  });
  finishedJobs.on('error', (err) => outage.absorbs(err) || logger.error({ err }, 'upload queue error'));
  lifecycle.onClose('reconciler queue', () => finishedJobs.close());
  await lifecycle.start('record reconciler', createRecordReconciler({ queue: finishedJobs, ledger, logger }));
  // Paused because the service refused the key: the reload may bring the right one.
  settings.onChange(() => worker.resume());
  return worker;
}
