import { DelayedError, type Job, Worker } from 'bullmq';
import type { Logger } from '../logger.ts';
import type { GatewayMetrics } from '../metrics.ts';
import type { ParsingApiClient } from '../parsing-api/parsing-api-client.ts';
import type { EventAnnouncer } from '../queue/announce-events.ts';
import { type CompletionJobData, completionQueueName } from '../queue/completion-queue.ts';
import type { KeySpace } from '../record/keys.ts';
import type { MessageLedger } from '../record/message-ledger.ts';
import type { AttachmentEntry, CompletionStatus } from '../record/message-record.ts';
import type { RedisClient } from '../redis/connections.ts';
import type { RedisOutageLog } from '../redis/outage-log.ts';
import { inspectResponse } from './classify-response.ts';
import { closeWorker, createRunningJobs } from './close-worker.ts';
import { childrenDecision, decidePoll } from './completion-policy.ts';
import { settleParseOutcome } from './settle-parse-outcome.ts';
import { uploadQuery } from './upload-fields.ts';
import type { UploadWorkspaces } from './upload-settings-schema.ts';

/**
 * Completion tracking (workspaces[].trackCompletion): a BullMQ worker on the `completion`
 * queue that polls each document until the service has parsed it and records the outcome on
 * the message entry: `ready`, `failed`, `readyDt`, a rejection (`error`, state `rejected`),
 * and `completion` (where polling stands). Each poll is one run of the document's job; while
 * the document is not ready, the job moves itself to delayed for the next interval
 * (completion-policy.ts), so no worker waits.
 */

export interface CompletionWorkerOptions {
  /** A connection with `maxRetriesPerRequest: null`, as BullMQ workers need. */
  connection: RedisClient;
  /** Counts the worker's errors while Redis is away instead of logging each. */
  outage?: RedisOutageLog;
  keys: KeySpace;
  ledger: MessageLedger;
  /** The uploads' client: same key, pool and timeouts. */
  client: ParsingApiClient;
  workspaces: UploadWorkspaces;
  /** Polls in flight in this process; default POLLS_IN_FLIGHT. */
  concurrency?: number;
  /** Counts parsed and parse_failed documents; absent: nothing is counted. */
  metrics?: GatewayMetrics;
  /** Announces document.parsed and document.parse_failed to the webhooks; absent: nothing is announced. */
  announcer?: EventAnnouncer;
  logger: Logger;
  /** Epoch milliseconds; injected for tests, default Date.now. */
  now?: () => number;
  /** upload.closeTimeout, ms: how long close() waits for polls in flight. */
  closeTimeout: number;
}

export interface CompletionWorker {
  start(): Promise<void>;
  readonly running: boolean;
  /** Finishes the polls in flight, then stops. Idempotent. */
  close(): Promise<void>;
}

/** Polls in flight per process unless told otherwise: 4, as a poll is one small GET. */
const POLLS_IN_FLIGHT = 4;

export function createCompletionWorker(options: CompletionWorkerOptions): CompletionWorker {
  const { ledger, client } = options;
  const log = options.logger.child({ component: 'completion' });
  const now = options.now ?? Date.now;
  let running = false;
  let closing: Promise<void> | undefined;

  const jobs = createRunningJobs();
  const worker = new Worker<CompletionJobData>(
    completionQueueName,
    (job, token) => jobs.track(poll(job, token)),
    {
      connection: options.connection,
      prefix: options.keys.queuePrefix,
      concurrency: options.concurrency ?? POLLS_IN_FLIGHT,
      autorun: false,
    },
  );
  // Redis away is the outage log's to report, once, not this listener's on every retry.
  worker.on('error', (err) => options.outage?.absorbs(err) || log.error({ err }, 'completion worker error'));
  // The poller itself failed for good (Redis gone through every attempt): say so on the entry.
  worker.on('failed', (job, err) => {
    if (!job) return;
    void (async () => {
      if (!(await job.isFailed())) return;
      await setCompletion(job.data, {
        state: 'error',
        polls: job.data.polls,
        nextPollAt: null,
        reason: err.message,
      });
    })().catch((updateErr: unknown) =>
      log.error({ err: updateErr, jobId: job.id }, 'could not record a failed completion poll'),
    );
  });

  async function setCompletion(
    data: CompletionJobData,
    completion: CompletionStatus,
    patch: Partial<Omit<AttachmentEntry, 'entry'>> = {},
  ): Promise<void> {
    await ledger.updateEntry(data.messageId, data.entry, { ...patch, completion });
  }

  async function poll(job: Job<CompletionJobData>, token: string | undefined): Promise<string> {
    const { data } = job;
    const jobLog = log.child({
      queueId: data.messageId,
      jobId: job.id,
      entry: data.entry,
      documentIdentifier: data.documentIdentifier,
    });
    const workspace = options.workspaces.get(data.workspace);
    const policy = workspace?.trackCompletion;
    if (!workspace || !policy) {
      const reason = `completion tracking is no longer configured for workspace ${data.workspace}`;
      await setCompletion(data, { state: 'error', polls: data.polls, nextPollAt: null, reason });
      jobLog.warn(reason);
      return 'error';
    }
    // The service's parse event (trackCompletion via resthook) may have settled it meanwhile.
    const current = await ledger.readEntry(data.messageId, data.entry);
    if (current === null || current.completion?.state === 'ready' || current.completion?.state === 'failed') {
      jobLog.debug('parse outcome already known: no poll');
      return current?.completion?.state ?? 'gone';
    }

    const result = await client.getDocument(data.documentIdentifier, uploadQuery(workspace));
    // Transient answers are never "the last attempt" here: the policy's bounds end polling.
    const response = inspectResponse({ result, attempt: 1, maxAttempts: Number.POSITIVE_INFINITY });
    const polls = data.polls + 1;
    const at = now();
    const decideFor = (read: typeof result, inspected: typeof response) =>
      decidePoll({
        response: inspected,
        status: read.kind === 'response' ? read.status : null,
        retryAfter: read.kind === 'response' ? read.headers['retry-after'] : undefined,
        polls,
        startedAt: data.uploadedAt,
        now: at,
        policy,
      });
    let decision = decideFor(result, response);
    // A document the workspace's splitter split is parsed when every child is.
    const children = response.document?.meta.childDocuments ?? [];
    if (decision.action === 'finish' && decision.state === 'ready' && children.length > 0) {
      decision = await childrenDecision(children, async (identifier) => {
        const read = await client.getDocument(identifier, uploadQuery(workspace));
        return decideFor(
          read,
          inspectResponse({ result: read, attempt: 1, maxAttempts: Number.POSITIVE_INFINITY }),
        );
      });
    }

    switch (decision.action) {
      case 'finish': {
        const settled = await settleParseOutcome(
          { ledger, announcer: options.announcer, metrics: options.metrics },
          data,
          {
            state: decision.state,
            reason: decision.reason,
            document: response.document ?? null,
            polls,
            settledBy: 'poll',
          },
        );
        jobLog.info(
          { polls, state: decision.state, reason: decision.reason, settled },
          'document parse finished',
        );
        return decision.state;
      }
      case 'stop':
        await setCompletion(data, {
          state: decision.state,
          polls,
          nextPollAt: null,
          reason: decision.reason,
        });
        jobLog.warn({ polls, state: decision.state, reason: decision.reason }, 'completion tracking stopped');
        return decision.state;
      case 'poll-again': {
        const nextPollAt = new Date(at + decision.delayMs).toISOString();
        await job.updateData({ ...data, polls });
        await setCompletion(data, { state: 'polling', polls, nextPollAt, reason: decision.reason });
        jobLog.debug({ polls, delayMs: decision.delayMs, reason: decision.reason }, 'document not ready yet');
        // A real timestamp, not the injected clock: BullMQ compares it with its own.
        await job.moveToDelayed(Date.now() + decision.delayMs, token);
        throw new DelayedError();
      }
    }
  }

  return {
    get running() {
      return running;
    },
    async start() {
      void worker.run().catch((err: unknown) => log.error({ err }, 'completion worker stopped'));
      await worker.waitUntilReady();
      running = true;
      log.info('completion worker running');
    },
    close() {
      closing ??= (async () => {
        running = false;
        const outcome = await closeWorker(worker, jobs, options.closeTimeout);
        if (outcome === 'closed') log.info('completion worker closed');
        else
          log.warn(
            { outcome },
            'completion worker stopped without finishing its close; polls resume at the next start',
          );
      })();
      return closing;
    },
  };
}
