import { type Job, type Queue, WaitingError, Worker, type WorkerOptions } from 'bullmq';
import type { Logger } from '../logger.ts';
import type { GatewayMetrics } from '../metrics.ts';
import type { ParsingApiClient } from '../parsing-api/parsing-api-client.ts';
import type { EventAnnouncer } from '../queue/announce-events.ts';
import type { CompletionJobData } from '../queue/completion-queue.ts';
import type { NoticeTrigger } from '../queue/notice-queue.ts';
import { type UploadJobData, uploadQueueName } from '../queue/upload-queue.ts';
import type { KeySpace } from '../record/keys.ts';
import type { MessageLedger } from '../record/message-ledger.ts';
import type { RedisClient } from '../redis/connections.ts';
import type { RedisOutageLog } from '../redis/outage-log.ts';
import { closeWorker, createRunningJobs, type RunningJobs } from './close-worker.ts';
import { repair } from './reconcile-records.ts';
import { createRequestSlots, jobsInFlight } from './request-slots.ts';
import { retryDelayMs } from './retry-delay.ts';
import type { RetryPromotion } from './retry-promotion.ts';
import { createUploadAttempt } from './upload-attempt.ts';
import { RecordedUploadFailure, RetryableUploadError } from './upload-ending.ts';
import type { UploadWorkspaces } from './upload-settings-schema.ts';

/**
 * The upload workers: BullMQ's Worker around one upload attempt per job (upload-attempt.ts),
 * with the retry policy as its backoff, the pause for a refused key, and a close that waits
 * for the uploads in flight up to a deadline.
 */

export interface UploadWorkerOptions {
  /** A connection with `maxRetriesPerRequest: null`, as BullMQ workers need. */
  connection: RedisClient;
  /** Counts the worker's errors while Redis is away instead of logging each. */
  outage?: RedisOutageLog;
  /** For blobs: any connection to the same Redis. */
  redis: RedisClient;
  keys: KeySpace;
  ledger: MessageLedger;
  client: ParsingApiClient;
  workspaces: UploadWorkspaces;
  /** upload.concurrency: uploads in flight in this process. */
  concurrency: number;
  /** upload.attempts. */
  attempts: number;
  metrics?: GatewayMetrics;
  logger: Logger;
  /** Injected for tests; default Math.random. */
  random?: () => number;
  /** upload.retryBaseDelay / retryMaxDelay, ms. */
  retryBaseDelay: number;
  retryMaxDelay: number;
  /** upload.stalledAfter, ms: lock duration, and how often dead workers' jobs are looked for. */
  stalledAfter: number;
  /** Promotes the waiting retries once uploads succeed again (upload.promoteAfterRecovery). */
  promotion?: RetryPromotion;
  /** upload.closeTimeout, ms: how long close() waits for uploads in flight. */
  closeTimeout: number;
  /** upload.maxStalls: how often a job may be re-run after its worker died before it fails. */
  maxStalls: number;
  /** Which API key is in use (it changes on a reload): a 401 to an older key does not pause. */
  keyGeneration?: () => number;
  /** Completion tracking's queue; absent when no workspace tracks completion. */
  completion?: Queue<CompletionJobData>;
  /** Announces each document's final state to the webhooks (announce-events.ts); absent: none. */
  announcer?: EventAnnouncer;
  /** Told of each document's final state, for the sender notices (src/notices); absent: none. */
  notices?: NoticeTrigger;
  /** api.timeout, ms: after a timed-out attempt, how long a lookup finding nothing is not trusted. */
  requestTimeoutMs?: number;
}

export interface UploadWorker {
  start(): Promise<void>;
  readonly running: boolean;
  /** Why the worker is paused (the service refused the API key), or null. */
  readonly pausedReason: string | null;
  /** Takes jobs again after a pause for a refused key (the key was corrected). */
  resume(): void;
  /**
   * Finishes the uploads in flight, then stops; after `closeTimeout` ms it stops waiting and
   * leaves them to BullMQ's stall recovery (their locks lapse and another worker re-runs them,
   * finding what this one uploaded by its customIdentifier). Idempotent.
   */
  close(): Promise<void>;
}

export function createUploadWorker(options: UploadWorkerOptions): UploadWorker {
  const log = options.logger.child({ component: 'uploader' });
  let pausedReason: string | null = null;
  let running = false;
  let closing: Promise<void> | undefined;

  const upload = createUploadAttempt({
    ...options,
    requestSlots: createRequestSlots(options.concurrency),
    logger: log,
    settleWaitMs: options.stalledAfter,
    async pauseUploads(reason) {
      pausedReason = reason;
      // pause(true): do not wait for the active jobs, the one that saw the refusal among them.
      await worker.pause(true);
    },
  });
  const jobs = createRunningJobs();
  const worker = new Worker<UploadJobData>(
    uploadQueueName,
    // A fetch begun before a pause may still hand out a job: it goes back untouched.
    (job, token) => jobs.track(pausedReason === null ? upload(job, token) : handBack(job, token)),
    workerOptions(options),
  );
  // Redis away is the outage log's to report, once, not this listener's on every retry.
  worker.on('error', (err) => options.outage?.absorbs(err) || log.error({ err }, 'upload worker error'));
  worker.on('failed', (job, err) => {
    if (err instanceof RetryableUploadError) options.promotion?.retryScheduled(err.retryAfter);
    if (job && !(err instanceof RecordedUploadFailure)) recordGivenUp(options, log, job, err);
  });
  worker.on('completed', () => options.promotion?.succeeded());

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
    resume() {
      if (pausedReason === null) return;
      pausedReason = null;
      worker.resume();
      log.info('uploads resumed');
    },
    close() {
      running = false;
      closing ??= closeWithin(worker, jobs, options.closeTimeout, log).then(() =>
        options.promotion?.settled(),
      );
      return closing;
    },
  };
}

/** Back to the wait list, no attempt spent (BullMQ's WaitingError). */
async function handBack(job: Job<UploadJobData>, token: string | undefined): Promise<never> {
  await job.moveToWait(token);
  throw new WaitingError();
}

function workerOptions(options: UploadWorkerOptions): WorkerOptions {
  const random = options.random ?? Math.random;
  return {
    connection: options.connection,
    prefix: options.keys.queuePrefix,
    concurrency: jobsInFlight(options.concurrency),
    autorun: false,
    lockDuration: options.stalledAfter,
    maxStalledCount: options.maxStalls,
    stalledInterval: options.stalledAfter,
    settings: {
      backoffStrategy: (attemptsMade, _type, err) =>
        retryDelayMs({
          attempt: attemptsMade,
          retryAfter: err instanceof RetryableUploadError ? err.retryAfter : undefined,
          now: Date.now(),
          random,
          baseMs: options.retryBaseDelay,
          capMs: options.retryMaxDelay,
        }),
    },
  };
}

/**
 * A job that failed for good on something other than an API answer (Redis gone while reading
 * its blob, a worker that kept dying mid-job so BullMQ gave up on it as stalled) must not be
 * left looking "uploading". A RecordedUploadFailure was recorded where it was thrown. Should
 * this process die before the write, the record reconciler repairs the entry at the next start.
 */
function recordGivenUp(
  { ledger, metrics }: Pick<UploadWorkerOptions, 'ledger' | 'metrics'>,
  log: Logger,
  job: Job<UploadJobData>,
  err: Error,
): void {
  void (async () => {
    if (!(await job.isFailed())) return;
    if (await repair(ledger, job, { state: 'failed', failedReason: err.message }, log)) {
      metrics?.documents.inc({ outcome: 'failed' });
    }
  })().catch((updateErr: unknown) =>
    log.error({ err: updateErr, jobId: job.id }, 'could not record a failed upload'),
  );
}

/** Waits for the uploads in flight up to `limitMs`, then leaves them to stall recovery. */
async function closeWithin(
  worker: Worker<UploadJobData>,
  jobs: RunningJobs,
  limitMs: number,
  log: Logger,
): Promise<void> {
  const outcome = await closeWorker(worker, jobs, limitMs);
  if (outcome === 'deadline') {
    log.warn({ ms: limitMs }, 'uploads still in flight at the deadline are handed back to the queue');
  } else if (outcome === 'redis unreachable') {
    log.warn('no upload was in flight; stopped without waiting for Redis to answer the worker');
  } else {
    log.info('upload worker closed');
  }
}
