import { type Job, type Queue, UnrecoverableError, WaitingError, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { WorkspaceConfig } from '../config/schema.ts';
import type { GatewayMetrics } from '../http/metrics.ts';
import type { Logger } from '../logger.ts';
import { releaseBlob } from '../queue/blob-release.ts';
import type { KeySpace } from '../queue/keys.ts';
import type { MessageLedger } from '../queue/message-ledger.ts';
import type { AttachmentEntry, MessageRecord } from '../queue/message-record.ts';
import { type UploadJobData, uploadQueueName } from '../queue/upload-queue.ts';
import { type ApiResult, type InspectedResponse, inspectResponse } from './classify-response.ts';
import { closeWorker, createRunningJobs } from './close-worker.ts';
import { type CompletionJobData, startTracking } from './completion-queue.ts';
import { findEarlierUpload } from './find-earlier-upload.ts';
import type { ParsingApiClient } from './parsing-api-client.ts';
import { documentOutcome, requestErrorOf, uploadContextOf } from './record-outcome.ts';
import { retryDelayMs } from './retry-delay.ts';
import { customIdentifierOf, type UploadContext, uploadFields, uploadQuery } from './upload-fields.ts';
import { identifiesOneUpload } from './upload-identity.ts';

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
  /** upload.retryBaseDelay / retryMaxDelay, ms; default 1 s / 10 min. */
  retryBaseDelay?: number;
  retryMaxDelay?: number;
  /** upload.stalledAfter, ms: lock duration, and how often dead workers' jobs are looked for; default 30 s. */
  stalledAfter?: number;
  /** upload.closeTimeout, ms: how long close() waits for uploads in flight; default 30 s. */
  closeTimeout?: number;
  /** upload.maxStalls: how often a job may be re-run after its worker died before it fails; default 3. */
  maxStalls?: number;
  /** Which API key is in use (it changes on a reload): a 401 to an older key does not pause. */
  keyGeneration?: () => number;
  /** Completion tracking's queue; absent when no workspace tracks completion. */
  completion?: Queue<CompletionJobData>;
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

/**
 * A permanent failure the worker recorded on the entry before throwing it; BullMQ fails the
 * job without retrying. Other UnrecoverableErrors come from BullMQ itself (a job that stalled
 * more than the allowed number of times) and are recorded by the 'failed' listener.
 */
class RecordedUploadFailure extends UnrecoverableError {
  constructor(reason: string) {
    super(reason);
    this.name = 'RecordedUploadFailure';
  }
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

export function createUploadWorker(options: UploadWorkerOptions): UploadWorker {
  const { ledger, keys, client } = options;
  const log = options.logger.child({ component: 'uploader' });
  const random = options.random ?? Math.random;
  let pausedReason: string | null = null;
  let running = false;
  let closing: Promise<void> | undefined;
  const jobs = createRunningJobs();

  const worker = new Worker<UploadJobData>(uploadQueueName, (job, token) => jobs.track(upload(job, token)), {
    connection: options.connection,
    prefix: keys.queuePrefix,
    concurrency: options.concurrency,
    autorun: false,
    lockDuration: options.stalledAfter ?? 30_000,
    maxStalledCount: options.maxStalls ?? 3,
    stalledInterval: options.stalledAfter ?? 30_000,
    settings: {
      backoffStrategy: (attemptsMade, _type, err) =>
        retryDelayMs({
          attempt: attemptsMade,
          retryAfter: err instanceof RetryableUploadError ? err.retryAfter : undefined,
          now: Date.now(),
          random,
          ...(options.retryBaseDelay === undefined ? {} : { baseMs: options.retryBaseDelay }),
          ...(options.retryMaxDelay === undefined ? {} : { capMs: options.retryMaxDelay }),
        }),
    },
  });
  worker.on('error', (err) => log.error({ err }, 'upload worker error'));
  // A job that ran out of attempts on something other than an API answer (Redis gone while
  // reading its blob, a stalled worker) must not be left looking "uploading".
  // A job that failed for good on something other than an API answer (Redis gone while
  // reading its blob, a worker that kept dying mid-job so BullMQ gave up on it as stalled)
  // must not be left looking "uploading". RecordedUploadFailure was recorded where it was thrown.
  worker.on('failed', (job, err) => {
    if (!job || err instanceof RecordedUploadFailure) return;
    void (async () => {
      if (!(await job.isFailed())) return;
      await ledger.updateEntry(job.data.messageId, job.data.entry, {
        state: 'failed',
        reason: `gave up: ${err.message}`,
      });
      log.warn({ queueId: job.data.messageId, jobId: job.id, reason: err.message }, 'upload failed');
    })().catch((updateErr: unknown) =>
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
    const fail = async (reason: string, patch: Partial<AttachmentEntry> = {}): Promise<never> => {
      await ledger.updateEntry(data.messageId, data.entry, {
        ...patch,
        state: 'failed',
        reason,
        attempts: attempt,
      });
      jobLog.warn({ reason, ...patch }, 'upload failed');
      throw new RecordedUploadFailure(reason);
    };

    // A job run again after its worker died between settling the entry (and releasing the
    // blob) and BullMQ's completion: the work is done, finish it without touching anything.
    const current = await ledger.readEntry(data.messageId, data.entry);
    if (current?.documentIdentifier && (current.state === 'uploaded' || current.state === 'rejected')) {
      jobLog.info(
        { documentIdentifier: current.documentIdentifier },
        'upload already settled by an earlier run',
      );
      await finishSettled(data, current, jobLog);
      return { documentIdentifier: current.documentIdentifier };
    }
    const workspace = options.workspaces.get(data.workspace);
    if (!workspace) return fail(`workspace ${data.workspace} is no longer configured`);
    const blob = await options.redis.getBuffer(keys.message(data.messageId).blob(data.sha256));
    if (!blob) return fail('the stored attachment is gone');

    const entryBefore = await ledger.updateEntry(data.messageId, data.entry, {
      state: 'uploading',
      attempts: attempt,
    });
    // The message's facts for customIdentifier and expiryTime; the record outlives the upload.
    const record = entryBefore ? await ledger.read(data.messageId) : null;
    const context = uploadContextOf(record, data, new Date());
    const maxAttempts = job.opts.attempts ?? options.attempts;
    // The key this attempt's requests carry: a reload may replace it while they are in flight.
    const keyGeneration = options.keyGeneration?.() ?? 0;
    const earlier = await earlierUpload(job, current, workspace, context, jobLog);
    let inspected: InspectedResponse;
    if (earlier) {
      // An earlier attempt's document: classified as if it were this attempt's answer.
      inspected = inspectResponse({ result: earlier, attempt, maxAttempts });
    } else {
      jobLog.debug({ attemptsStarted: job.attemptsStarted }, 'uploading');
      const started = performance.now();
      const result = await client.uploadDocument({
        file: blob,
        fileName: data.fileName,
        contentType: data.contentType,
        fields: uploadFields(workspace, context),
        ...uploadQuery(workspace),
      });
      options.metrics?.uploadSeconds.observe((performance.now() - started) / 1000);
      inspected = inspectResponse({ result, attempt, maxAttempts });
    }
    options.metrics?.uploads.inc({ outcome: inspected.verdict.outcome });
    const settled = await settle(job, token, inspected, jobLog, attempt, fail, keyGeneration, record);
    if (options.completion && inspected.verdict.outcome === 'uploaded') {
      await startTracking({
        queue: options.completion,
        ledger,
        logger: jobLog,
        workspace,
        document: inspected.document,
        upload: { ...settled, messageId: data.messageId, entry: data.entry, workspace: data.workspace },
        now: Date.now(),
      });
    }
    return settled;
  }

  /**
   * Before any attempt but the first (a retry, or a job BullMQ handed out again after its
   * worker died), ask the service whether an earlier attempt created the document already.
   * Found: its answer, as if the upload had just returned it. Not found: null, upload. No
   * reliable answer: a retryable error, since uploading blindly could duplicate.
   */
  async function earlierUpload(
    job: Job<UploadJobData>,
    entry: AttachmentEntry | null,
    workspace: WorkspaceConfig,
    context: UploadContext,
    jobLog: Logger,
  ): Promise<ApiResult | null> {
    // BullMQ's count says whether this job ran before; the entry's says whether the upload
    // did, which `failed retry` (it resets the job's counts) must not hide.
    const triedBefore = job.attemptsStarted > 1 || (entry?.attempts ?? 0) > 0;
    if (!triedBefore || !identifiesOneUpload(workspace)) return null;
    const customIdentifier = customIdentifierOf(workspace, context);
    const answer = await client.findDocuments(customIdentifier, uploadQuery(workspace));
    // A refused key is refused for the lookup as for the upload: the same pause, not a retry.
    if (answer.kind === 'response' && (answer.status === 401 || answer.status === 403)) return answer;
    const earlier = findEarlierUpload(answer, customIdentifier, workspace.identifier);
    if ('unknown' in earlier) throw new RetryableUploadError(earlier.unknown, undefined);
    if (earlier.found === null) return null;
    jobLog.info(
      { documentIdentifier: earlier.found.meta.identifier, customIdentifier },
      'an earlier attempt created the document already: not uploading it again',
    );
    return { kind: 'response', status: 200, headers: {}, body: earlier.found };
  }

  /** Where the document came from: `GET /v1/documents/{identifier}`. Idempotent. */
  async function indexDocument(
    data: UploadJobData,
    documentIdentifier: string,
    record: MessageRecord | null,
  ): Promise<void> {
    await ledger.recordDocument({
      documentIdentifier,
      messageId: data.messageId,
      entry: data.entry,
      workspace: data.workspace,
      fileName: data.fileName,
      sourceEmail: record?.sourceEmail ?? '',
      sourceEmailAddress: record?.sourceEmailAddress ?? null,
    });
  }

  /**
   * The steps after the entry was settled, for a run that died among them: the document
   * index, the blob's release and completion tracking, each idempotent.
   */
  async function finishSettled(data: UploadJobData, entry: AttachmentEntry, jobLog: Logger): Promise<void> {
    if (!entry.documentIdentifier) return;
    await indexDocument(data, entry.documentIdentifier, await ledger.read(data.messageId));
    await releaseBlob(options.redis, keys, {
      messageId: data.messageId,
      sha256: data.sha256,
      entry: data.entry,
    });
    const workspace = options.workspaces.get(data.workspace);
    if (
      options.completion &&
      workspace &&
      entry.state === 'uploaded' &&
      // Tracking never started, or marked polling by a run that died before adding its job
      // (adding it again is a no-op: the job id is stable).
      (!entry.completion || entry.completion.state === 'polling') &&
      entry.ready !== true
    ) {
      await startTracking({
        queue: options.completion,
        ledger,
        logger: jobLog,
        workspace,
        document: null,
        upload: {
          messageId: data.messageId,
          entry: data.entry,
          workspace: data.workspace,
          documentIdentifier: entry.documentIdentifier,
        },
        now: Date.now(),
      });
    }
  }

  async function settle(
    job: Job<UploadJobData>,
    token: string | undefined,
    { verdict, document }: InspectedResponse,
    jobLog: Logger,
    attempt: number,
    fail: (reason: string, patch?: Partial<AttachmentEntry>) => Promise<never>,
    keyGeneration: number,
    /** The message record this attempt read for its fields: the document index takes its source from it. */
    record: MessageRecord | null,
  ): Promise<{ documentIdentifier: string }> {
    const { data } = job;
    switch (verdict.outcome) {
      case 'uploaded':
      case 'rejected': {
        const rejected = verdict.outcome === 'rejected';
        const reason = rejected ? `${verdict.errorCode}: ${verdict.errorDetail}` : null;
        // The document index first, the entry second, the blob last: a run cut short after any
        // step is re-run, sees a settled entry, and redoes the steps after it (finishSettled).
        await indexDocument(data, verdict.documentIdentifier, record);
        await ledger.updateEntry(data.messageId, data.entry, {
          state: verdict.outcome,
          reason,
          documentIdentifier: verdict.documentIdentifier,
          warnings: verdict.warnings,
          attempts: attempt,
          // ready/failed/readyDt (final with wait: true) and the rejection's error.
          ...(document ? documentOutcome(document) : {}),
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
          requestErrorOf(verdict),
        );
      case 'unauthorized': {
        // Refused a key that a reload has replaced since: not a reason to stop again.
        if (options.keyGeneration && options.keyGeneration() !== keyGeneration) {
          throw new RetryableUploadError(
            'the API key was replaced while this request was in flight',
            undefined,
          );
        }
        // The key is wrong for every job: stop taking jobs and put this one back in the queue
        // untouched (no attempt spent), so the backlog waits instead of failing. A reload with
        // a corrected key (SIGHUP) resumes the worker. pause(true): do not wait for the active
        // jobs, this one among them.
        pausedReason = `the parsing service refused the API key (HTTP ${verdict.status}): ${verdict.detail}`;
        jobLog.error(
          { status: verdict.status },
          'API key refused; uploads paused until the key is corrected (SIGHUP)',
        );
        await worker.pause(true);
        await ledger.updateEntry(data.messageId, data.entry, { state: 'queued', reason: pausedReason });
        await job.moveToWait(token);
        throw new WaitingError();
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
    resume() {
      if (pausedReason === null) return;
      pausedReason = null;
      worker.resume();
      log.info('uploads resumed');
    },
    close() {
      closing ??= (async () => {
        running = false;
        const limit = options.closeTimeout ?? 30_000;
        const outcome = await closeWorker(worker, jobs, limit);
        if (outcome === 'deadline') {
          log.warn({ ms: limit }, 'uploads still in flight at the deadline are handed back to the queue');
        } else if (outcome === 'redis unreachable') {
          log.warn('no upload was in flight; stopped without waiting for Redis to answer the worker');
        } else {
          log.info('upload worker closed');
        }
      })();
      return closing;
    },
  };
}
