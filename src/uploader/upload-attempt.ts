import type { Job, Queue } from 'bullmq';
import type { Logger } from '../logger.ts';
import type { GatewayMetrics } from '../metrics.ts';
import type { ApiResult } from '../parsing-api/api-result.ts';
import type { Document } from '../parsing-api/document-schema.ts';
import type { ParsingApiClient } from '../parsing-api/parsing-api-client.ts';
import type { EventAnnouncer } from '../queue/announce-events.ts';
import type { CompletionJobData } from '../queue/completion-queue.ts';
import type { NoticeTrigger } from '../queue/notice-queue.ts';
import type { UploadJobData } from '../queue/upload-queue.ts';
import type { KeySpace } from '../record/keys.ts';
import type { EntryPatch, MessageLedger, StoredEntry } from '../record/message-ledger.ts';
import { type AttachmentEntry, finalStates, type MessageRecord } from '../record/message-record.ts';
import type { RedisClient } from '../redis/connections.ts';
import { releaseBlob } from '../store/blob-release.ts';
import { readStoredDocument } from '../store/stored-document.ts';
import { countDocuments, documentOutcomesOf } from './document-metrics.ts';
import { type AttemptFacts, type NextStep, nextStep } from './next-step.ts';
import { uploadContextOf } from './record-outcome.ts';
import type { RequestSlots } from './request-slots.ts';
import {
  type FollowUp,
  failure,
  finishSettled,
  retryLater,
  type Settlement,
  settleAnswer,
} from './settle-attempt.ts';
import { settleThroughOutage } from './settle-through-outage.ts';
import { startTracking } from './start-tracking.ts';
import { conclude, type UploadResult } from './upload-ending.ts';
import {
  customIdentifierOf,
  type UploadContext,
  uploadFields,
  uploadQuery,
  withDocumentType,
  withSubaddress,
} from './upload-fields.ts';
import type { UploadWorkspace, UploadWorkspaces } from './upload-settings-schema.ts';

/**
 * One upload attempt, the I/O around the pure steps: read the entry and the bytes, ask
 * nextStep what to do, make the lookup or the upload it names, settle the answer, perform the
 * settlement's actions in order, and translate its ending for BullMQ.
 */

export interface UploadAttemptDeps {
  /** For blobs: any connection to the same Redis. */
  redis: RedisClient;
  keys: KeySpace;
  ledger: MessageLedger;
  client: ParsingApiClient;
  /** upload.concurrency: the API requests in flight at once, shared by the jobs. */
  requestSlots: RequestSlots;
  workspaces: UploadWorkspaces;
  /** upload.attempts, for a job that does not carry its own. */
  attempts: number;
  metrics?: GatewayMetrics | undefined;
  logger: Logger;
  /** Which API key is in use (it changes on a reload): a 401 to an older key does not pause. */
  keyGeneration?: (() => number) | undefined;
  /** Completion tracking's queue; absent when no workspace tracks completion. */
  completion?: Queue<CompletionJobData> | undefined;
  /** Announces each final state to the webhooks that asked for it; absent: nothing is announced. */
  announcer?: EventAnnouncer | undefined;
  /** Told of each document's final state, for a notice to the sender once the last settles; absent: none. */
  notices?: NoticeTrigger | undefined;
  /** `api.timeout`, ms: after a timed-out attempt, how long a lookup finding nothing is not trusted. */
  requestTimeoutMs?: number | undefined;
  /** Stops taking jobs until resumed: the service refused the API key. */
  pauseUploads(reason: string): Promise<void>;
  /**
   * upload.stalledAfter, ms: how long a settlement's writes wait out a Redis outage before the
   * job is failed and retried (settle-through-outage.ts).
   */
  settleWaitMs: number;
}

export type UploadProcessor = (job: Job<UploadJobData>, token: string | undefined) => Promise<UploadResult>;

/** What one run of a job knows; `begun` once it marked the entry uploading. */
interface Run {
  job: Job<UploadJobData>;
  data: UploadJobData;
  attempt: number;
  log: Logger;
  facts: AttemptFacts;
  /** The message record as the run found it; null when gone. */
  record: MessageRecord | null;
  /** The entry as this run last read or wrote it, for its next compare-and-set; null when gone. */
  stored: StoredEntry | null;
  begun?: Begun;
}

interface Begun {
  /** The message's facts for customIdentifier, expiryTime and the document index; null when gone. */
  record: MessageRecord | null;
  context: UploadContext;
  /** The key this attempt's last request carried: a reload may replace it while it is in flight. */
  keyGeneration: number;
}

export function createUploadAttempt(deps: UploadAttemptDeps): UploadProcessor {
  return async (job, token) => {
    const run = await openRun(deps, job);
    const settlement = await settlementFor(deps, run, nextStep(run.facts));
    if (settlement.outcome) deps.metrics?.uploads.inc({ outcome: settlement.outcome });
    const outage = { redis: deps.redis, boundMs: deps.settleWaitMs };
    for (const action of settlement.actions) {
      await settleThroughOutage(outage, run.log, action.action, () => perform(deps, run, action));
    }
    return conclude(run.job, run.log, settlement, token);
  };
}

async function openRun(deps: UploadAttemptDeps, job: Job<UploadJobData>): Promise<Run> {
  const { data } = job;
  const attempt = job.attemptsMade + 1;
  // The record is read while the bytes are: its round trip overlaps theirs.
  const reading = deps.ledger.readWithEntry(data.messageId, data.entry);
  // Awaited below; this only keeps its failure from going unhandled should the bytes' read fail first.
  reading.catch(() => undefined);
  const blob = await readStoredDocument(deps.redis, deps.keys, data);
  const { record, entry: stored } = await reading;
  const facts: AttemptFacts = {
    attempt,
    maxAttempts: job.opts.attempts ?? deps.attempts,
    runsStarted: job.attemptsStarted,
    entry: stored?.value ?? null,
    workspaceName: data.workspace,
    workspace: workspaceOf(deps.workspaces, data),
    blob,
  };
  const log = deps.logger.child({ queueId: data.messageId, jobId: job.id, entry: data.entry, attempt });
  return { job, data, attempt, log, facts, record, stored };
}

/**
 * The job's workspace as its upload sees it: with the fields of the tag it was addressed by,
 * and the document type whose address it was reached by.
 */
function workspaceOf(workspaces: UploadWorkspaces, data: UploadJobData): UploadWorkspace | undefined {
  const workspace = workspaces.get(data.workspace);
  return workspace && withDocumentType(withSubaddress(workspace, data.subaddress), data.documentType);
}

async function settlementFor(deps: UploadAttemptDeps, run: Run, step: NextStep): Promise<Settlement> {
  switch (step.step) {
    case 'skip':
      run.log.info(
        { documentIdentifier: step.entry.documentIdentifier },
        'upload already settled by an earlier run',
      );
      return finishSettled(step.entry);
    case 'look-up':
      return settlementFor(deps, run, await lookUp(deps, run, step.workspace));
    case 'upload':
      return settleWith(deps, run, await upload(deps, run, step.workspace, step.file));
    case 'adopt':
    case 'key-refused':
      return settleWith(deps, run, step.answer);
    case 'retry-later':
      return retryLater(step.reason, step.retryAfter, run.attempt);
    case 'fail':
      return failure(step.reason, run.attempt);
  }
}

/** Marks the entry uploading and reads what the requests are made of; once per run. */
async function begin(deps: UploadAttemptDeps, run: Run): Promise<Begun> {
  if (run.begun) return run.begun;
  const { data } = run;
  const entry = await changeEntry(deps, run, { state: 'uploading', attempts: run.attempt });
  // The record outlives the upload; without it the upload still goes, with what the job knows.
  const record = entry ? run.record : null;
  const keyGeneration = deps.keyGeneration?.() ?? 0;
  run.begun = { record, context: uploadContextOf(record, data, new Date()), keyGeneration };
  return run.begun;
}

async function lookUp(deps: UploadAttemptDeps, run: Run, workspace: UploadWorkspace): Promise<NextStep> {
  const { context } = await begin(deps, run);
  const customIdentifier = customIdentifierOf(workspace, context);
  const answer = await send(deps, run, () =>
    deps.client.findDocuments(customIdentifier, uploadQuery(workspace)),
  );
  const step = nextStep({
    ...run.facts,
    requestTimeoutMs: deps.requestTimeoutMs,
    lookup: { customIdentifier, answer, answeredAt: Date.now() },
  });
  if (step.step === 'adopt') {
    run.log.info(
      { documentIdentifier: step.documentIdentifier, customIdentifier },
      'an earlier attempt created the document already: not uploading it again',
    );
  }
  return step;
}

async function upload(
  deps: UploadAttemptDeps,
  run: Run,
  workspace: UploadWorkspace,
  file: Buffer,
): Promise<ApiResult> {
  const { context } = await begin(deps, run);
  return send(deps, run, async () => {
    run.log.debug({ attemptsStarted: run.job.attemptsStarted }, 'uploading');
    const started = performance.now();
    const result = await deps.client.uploadDocument({
      file,
      fileName: run.data.fileName,
      contentType: run.data.contentType,
      fields: uploadFields(workspace, context),
      ...uploadQuery(workspace),
    });
    deps.metrics?.uploadSeconds.observe((performance.now() - started) / 1000);
    return result;
  });
}

/** Makes one API request of a begun run once a request slot is free, noting the key it carries. */
async function send<T>(deps: UploadAttemptDeps, run: Run, request: () => Promise<T>): Promise<T> {
  const begun = await begin(deps, run);
  return deps.requestSlots.run(() => {
    begun.keyGeneration = deps.keyGeneration?.() ?? 0;
    return request();
  });
}

async function settleWith(deps: UploadAttemptDeps, run: Run, answer: ApiResult): Promise<Settlement> {
  const { keyGeneration } = await begin(deps, run);
  const keyReplaced = deps.keyGeneration !== undefined && deps.keyGeneration() !== keyGeneration;
  return settleAnswer({ attempt: run.attempt, maxAttempts: run.facts.maxAttempts, answer, keyReplaced });
}

async function perform(deps: UploadAttemptDeps, run: Run, action: FollowUp): Promise<void> {
  const { data } = run;
  switch (action.action) {
    case 'index-document': {
      const record = run.begun ? run.begun.record : run.record;
      await deps.ledger.recordDocument({
        documentIdentifier: action.documentIdentifier,
        messageId: data.messageId,
        entry: data.entry,
        workspace: data.workspace,
        fileName: data.fileName,
        sourceEmail: record?.sourceEmail ?? '',
        sourceEmailAddress: record?.sourceEmailAddress ?? null,
      });
      return;
    }
    case 'update-entry': {
      const written = await changeEntry(deps, run, withTracking(deps, run, action.change));
      countDocuments(deps.metrics, documentOutcomesOf(action.change));
      await announceFinal(deps, run, written?.value ?? null);
      return noticeIfLast(deps, run, written?.value ?? null);
    }
    case 'release-blob':
      await releaseBlob(deps.redis, deps.keys, {
        messageId: data.messageId,
        sha256: data.sha256,
        entry: data.entry,
      });
      return;
    case 'track-completion':
      return trackCompletion(deps, run, action.documentIdentifier, action.document);
    case 'pause-uploads':
      return deps.pauseUploads(action.reason);
  }
}

/** The events of an entry's final states (README, "Webhooks"). */
const finalEvents = {
  uploaded: 'document.uploaded',
  rejected: 'document.rejected',
  failed: 'document.failed',
} as const;

/**
 * Announces the entry's final state once it is written. A re-run of a settled job writes the
 * same state again and announces the same event id, which the webhook queue takes only once.
 */
async function announceFinal(
  deps: UploadAttemptDeps,
  run: Run,
  entry: AttachmentEntry | null,
): Promise<void> {
  if (!deps.announcer || entry === null) return;
  if (entry.state !== 'uploaded' && entry.state !== 'rejected' && entry.state !== 'failed') return;
  await deps.announcer.announce({
    event: finalEvents[entry.state],
    messageId: run.data.messageId,
    workspace: run.data.workspace,
    subject: [run.data.entry],
    payload: { attachment: entry },
  });
}

/**
 * Tells the sender notices that a document settled: the trigger queues the message's notice
 * once every entry of the record is final. Written after the entry, so of two documents
 * settling at once at least the later sees the record settled.
 */
async function noticeIfLast(deps: UploadAttemptDeps, run: Run, entry: AttachmentEntry | null): Promise<void> {
  if (!deps.notices || entry === null || !finalStates.has(entry.state)) return;
  await deps.notices.documentSettled(run.data.messageId);
}

/**
 * An upload that completion tracking will follow says so in the same write that records it
 * uploaded (`completion: polling`), so a reader never sees it uploaded and untracked for a
 * moment (`send --wait` would stop there). A completion already settled stays.
 */
function withTracking(deps: UploadAttemptDeps, run: Run, change: EntryPatch): EntryPatch {
  const policy = run.facts.workspace?.trackCompletion;
  if (!deps.completion || !policy || change.state !== 'uploaded' || change.ready === true) return change;
  const known = run.stored?.value.completion?.state;
  if (known === 'ready' || known === 'failed') return change;
  const nextPollAt = new Date(Date.now() + policy.firstDelay).toISOString();
  return { ...change, completion: { state: 'polling', polls: 0, nextPollAt, reason: null } };
}

/** Changes the run's entry, starting from the text it last saw of it; keeps what it wrote. */
async function changeEntry(
  deps: UploadAttemptDeps,
  run: Run,
  patch: EntryPatch,
): Promise<StoredEntry | null> {
  run.stored = await deps.ledger.replaceEntry(run.data.messageId, run.data.entry, patch, run.stored);
  return run.stored;
}

async function trackCompletion(
  deps: UploadAttemptDeps,
  run: Run,
  documentIdentifier: string,
  document: Document | null,
): Promise<void> {
  const workspace = run.facts.workspace;
  if (!deps.completion || !workspace) return;
  const { messageId, entry } = run.data;
  await startTracking({
    queue: deps.completion,
    ledger: deps.ledger,
    logger: run.log,
    workspace,
    document,
    upload: { documentIdentifier, messageId, entry, workspace: run.data.workspace },
    now: Date.now(),
    pushed: {
      redis: deps.redis,
      keys: deps.keys,
      ledger: deps.ledger,
      announcer: deps.announcer,
      metrics: deps.metrics,
    },
  });
}
