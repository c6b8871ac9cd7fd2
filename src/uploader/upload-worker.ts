import { DelayedError, type Job, UnrecoverableError, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { WorkspaceConfig } from '../config/schema.ts';
import type { GatewayMetrics } from '../http/metrics.ts';
import type { Logger } from '../logger.ts';
import { releaseBlob } from '../queue/blob-release.ts';
import type { KeySpace } from '../queue/keys.ts';
import type { MessageLedger } from '../queue/message-ledger.ts';
import { type UploadJobData, uploadQueueName } from '../queue/upload-queue.ts';
import { type Classification, classifyResponse } from './classify-response.ts';
import type { ParsingApiClient } from './parsing-api-client.ts';
import { retryDelayMs } from './retry-delay.ts';
import { uploadFields } from './upload-fields.ts';

export interface UploadWorkerOptions {
  /** A connection with `maxRetriesPerRequest: null`, as BullMQ workers need. */
  connection: Redis;
  /** For blobs: any connection to the same Redis. */
  redis: Redis;
  keys: KeySpace;
  ledger: MessageLedger;
  client: ParsingApiClient;
  workspaces: ReadonlyMap<string, WorkspaceConfig>;
  /** upload.concurrency: uploads in flight in this process. */
  concurrency: number;
  /** upload.attempts. */
  attempts: number;
  metrics?: GatewayMetrics;
  logger: Logger;
  /** Injected for tests; default Math.random. */
  random?: () => number;
}

export interface UploadWorker {
  start(): Promise<void>;
  readonly running: boolean;
  /** Why the worker is paused (the service refused the API key), or null. */
  readonly pausedReason: string | null;
  /** Finishes the uploads in flight, then stops. Idempotent. */
  close(): Promise<void>;
}

/** A transient failure: BullMQ retries it after the delay the retry policy chose. */
class RetryableUploadError extends Error {
  readonly retryAfter: string | undefined;
  constructor(reason: string, retryAfter: string | undefined) {
    super(reason);
    this.name = 'RetryableUploadError';
    this.retryAfter = retryAfter;
  }
}

/** How long a job waits when the service refused the key: long enough not to hammer it. */
const unauthorizedDelayMs = 60_000;

export function createUploadWorker(options: UploadWorkerOptions): UploadWorker {
  const { ledger, keys, client } = options;
  const log = options.logger.child({ component: 'uploader' });
  const random = options.random ?? Math.random;
  let pausedReason: string | null = null;
  let running = false;
  let closing: Promise<void> | undefined;

  const worker = new Worker<UploadJobData>(uploadQueueName, (job, token) => upload(job, token), {
    connection: options.connection,
    prefix: keys.queuePrefix,
    concurrency: options.concurrency,
    autorun: false,
    settings: {
      backoffStrategy: (attemptsMade, _type, err) =>
        retryDelayMs({
          attempt: attemptsMade,
          retryAfter: err instanceof RetryableUploadError ? err.retryAfter : undefined,
          now: Date.now(),
          random,
        }),
    },
  });
  worker.on('error', (err) => log.error({ err }, 'upload worker error'));
  // A job that ran out of attempts on something other than an API answer (Redis gone while
  // reading its blob, a stalled worker) must not be left looking "uploading".
  worker.on('failed', (job, err) => {
    if (!job || err instanceof UnrecoverableError || job.attemptsMade < (job.opts.attempts ?? 1)) return;
    if (err instanceof RetryableUploadError) return;
    void ledger
      .updateEntry(job.data.messageId, job.data.entry, { state: 'failed', reason: `gave up: ${err.message}` })
      .catch((updateErr: unknown) =>
        log.error({ err: updateErr, jobId: job.id }, 'could not record a failed upload'),
      );
  });

  async function upload(
    job: Job<UploadJobData>,
    token: string | undefined,
  ): Promise<{ documentIdentifier: string }> {
    const { data } = job;
    const attempt = job.attemptsMade + 1;
    const jobLog = log.child({ queueId: data.messageId, jobId: job.id, entry: data.entry, attempt });
    const fail = async (reason: string): Promise<never> => {
      await ledger.updateEntry(data.messageId, data.entry, { state: 'failed', reason, attempts: attempt });
      jobLog.warn({ reason }, 'upload failed');
      throw new UnrecoverableError(reason);
    };

    const workspace = options.workspaces.get(data.workspace);
    if (!workspace) return fail(`workspace ${data.workspace} is no longer configured`);
    const blob = await options.redis.getBuffer(keys.message(data.messageId).blob(data.sha256));
    if (!blob) return fail('the stored attachment is gone');

    await ledger.updateEntry(data.messageId, data.entry, { state: 'uploading', attempts: attempt });
    const started = performance.now();
    const result = await client.uploadDocument({
      file: blob,
      fileName: data.fileName,
      contentType: data.contentType,
      fields: uploadFields(workspace, data.fileName),
    });
    options.metrics?.uploadSeconds.observe((performance.now() - started) / 1000);
    const verdict = classifyResponse({ result, attempt, maxAttempts: job.opts.attempts ?? options.attempts });
    options.metrics?.uploads.inc({ outcome: verdict.outcome });
    return settle(job, token, verdict, jobLog, attempt, fail);
  }

  async function settle(
    job: Job<UploadJobData>,
    token: string | undefined,
    verdict: Classification,
    jobLog: Logger,
    attempt: number,
    fail: (reason: string) => Promise<never>,
  ): Promise<{ documentIdentifier: string }> {
    const { data } = job;
    switch (verdict.outcome) {
      case 'uploaded':
      case 'rejected': {
        const rejected = verdict.outcome === 'rejected';
        const reason = rejected ? `${verdict.errorCode}: ${verdict.errorDetail}` : null;
        const entry = await ledger.updateEntry(data.messageId, data.entry, {
          state: verdict.outcome,
          reason,
          documentIdentifier: verdict.documentIdentifier,
          warnings: verdict.warnings,
          attempts: attempt,
        });
        const record = await ledger.read(data.messageId);
        await ledger.recordDocument({
          documentIdentifier: verdict.documentIdentifier,
          messageId: data.messageId,
          entry: data.entry,
          workspace: data.workspace,
          fileName: entry?.fileName ?? data.fileName,
          sourceEmail: record?.sourceEmail ?? '',
          sourceEmailAddress: record?.sourceEmailAddress ?? null,
        });
        await releaseBlob(options.redis, keys, {
          messageId: data.messageId,
          sha256: data.sha256,
          entry: data.entry,
        });
        jobLog.info(
          { documentIdentifier: verdict.documentIdentifier, reason },
          `document ${verdict.outcome}`,
        );
        return { documentIdentifier: verdict.documentIdentifier };
      }
      case 'retry':
        await ledger.updateEntry(data.messageId, data.entry, {
          state: 'queued',
          reason: verdict.reason,
          attempts: attempt,
        });
        jobLog.warn({ reason: verdict.reason }, 'upload will be retried');
        throw new RetryableUploadError(verdict.reason, verdict.retryAfter);
      case 'failed':
        return fail(
          verdict.detail === verdict.reason ? verdict.reason : `${verdict.reason}: ${verdict.detail}`,
        );
      case 'unauthorized': {
        // The key is wrong for every job: stop taking jobs and put this one back untouched,
        // so the backlog waits in the queue instead of failing.
        pausedReason = `the parsing service refused the API key (HTTP ${verdict.status}): ${verdict.detail}`;
        jobLog.error({ status: verdict.status }, 'API key refused; uploads paused');
        void worker.pause(true);
        await ledger.updateEntry(data.messageId, data.entry, { state: 'queued', reason: pausedReason });
        await job.moveToDelayed(Date.now() + unauthorizedDelayMs, token);
        throw new DelayedError();
      }
    }
  }

  return {
    get running() {
      return running;
    },
    get pausedReason() {
      return pausedReason;
    },
    async start() {
      void worker.run().catch((err: unknown) => log.error({ err }, 'upload worker stopped'));
      await worker.waitUntilReady();
      running = true;
      log.info({ concurrency: options.concurrency }, 'upload worker running');
    },
    close() {
      closing ??= (async () => {
        running = false;
        await worker.close();
        log.info('upload worker closed');
      })();
      return closing;
    },
  };
}
