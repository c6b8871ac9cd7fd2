import type { Queue } from 'bullmq';
import { asError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { Document } from '../parsing-api/document-schema.ts';
import { type CompletionJobData, completionJobId } from '../queue/completion-queue.ts';
import type { KeySpace } from '../record/keys.ts';
import type { MessageLedger } from '../record/message-ledger.ts';
import type { RedisClient } from '../redis/connections.ts';
import { takePushedOutcome } from './resthook-receiver.ts';
import { type SettleDeps, settleParseOutcome } from './settle-parse-outcome.ts';
import type { CompletionPolicy } from './upload-options-schema.ts';
import type { UploadWorkspace } from './upload-settings-schema.ts';

/** Schedules the first poll of a document, `firstDelay` milliseconds from now. */
export async function scheduleCompletion(
  queue: Queue<CompletionJobData>,
  data: Omit<CompletionJobData, 'polls'>,
  policy: CompletionPolicy,
): Promise<void> {
  await queue.add(
    'poll',
    { ...data, polls: 0 },
    { jobId: completionJobId(data.messageId, data.entry), delay: policy.firstDelay },
  );
}

export interface StartTrackingInput {
  queue: Queue<CompletionJobData>;
  ledger: MessageLedger;
  logger: Logger;
  workspace: UploadWorkspace;
  /** The upload's answer: a document already ready needs no polling. */
  document: Document | null;
  upload: Omit<CompletionJobData, 'polls' | 'uploadedAt'>;
  /** Epoch milliseconds of the upload. */
  now: number;
  /**
   * Where an outcome the service pushed before this upload recorded its document waits
   * (trackCompletion via resthook), and what settling it announces and counts.
   */
  pushed?: (SettleDeps & { redis: RedisClient; keys: KeySpace }) | undefined;
}

/**
 * After a successful upload: when the workspace tracks completion and the answer came before
 * parsing finished, record `completion: polling` on the entry and schedule the first poll.
 * Never throws: the upload itself succeeded, and failing its job would upload it again.
 */
export async function startTracking(input: StartTrackingInput): Promise<void> {
  const policy = input.workspace.trackCompletion;
  if (!policy || input.document?.meta.ready === true) return;
  const { messageId, entry } = input.upload;
  const nextPollAt = new Date(input.now + policy.firstDelay).toISOString();
  try {
    // A parse event the service pushed may have come before this (trackCompletion via resthook).
    await input.ledger.reviseEntry(messageId, entry, (current) =>
      current.completion?.state === 'ready' || current.completion?.state === 'failed'
        ? null
        : { completion: { state: 'polling', polls: 0, nextPollAt, reason: null } },
    );
    await scheduleCompletion(input.queue, { ...input.upload, uploadedAt: input.now }, policy);
    if (policy.via === 'resthook' && input.pushed) await settlePushed(input, input.pushed);
  } catch (err) {
    const reason = `could not schedule completion tracking: ${asError(err).message}`;
    input.logger.error({ err, queueId: messageId, entry }, reason);
    await input.ledger
      .updateEntry(messageId, entry, { completion: { state: 'error', polls: 0, nextPollAt: null, reason } })
      .catch((updateErr: unknown) => input.logger.error({ err: updateErr }, 'could not record it either'));
  }
}

/** Settles the outcome the service pushed before the upload was recorded, if one came. */
async function settlePushed(
  input: StartTrackingInput,
  pushed: SettleDeps & { redis: RedisClient; keys: KeySpace },
): Promise<void> {
  const { messageId, entry, workspace, documentIdentifier } = input.upload;
  const outcome = await takePushedOutcome(pushed.redis, pushed.keys, documentIdentifier);
  if (outcome === null) return;
  await settleParseOutcome(
    pushed,
    { messageId, entry, workspace },
    { ...outcome, document: null, settledBy: 'resthook' },
  );
  await input.queue.remove(completionJobId(messageId, entry)).catch(() => 0);
}
