import { Queue } from 'bullmq';
import { asError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { Document } from '../parsing-api/document-schema.ts';
import type { RedisClient } from '../queue/redis-connections.ts';
import type { KeySpace } from '../record/keys.ts';
import type { MessageLedger } from '../record/message-ledger.ts';
import type { CompletionPolicy } from './upload-options-schema.ts';
import type { UploadWorkspace } from './upload-settings-schema.ts';

/**
 * Completion tracking's BullMQ queue: one delayed job per uploaded document, which polls
 * GET /v3/documents/{identifier} and, while the document is not ready, moves itself back to
 * delayed for the next interval. A job in Redis survives a restart, and a document waiting
 * for its next poll holds no worker.
 */

/** BullMQ queue name; its keys are `<prefix>:{queue}:completion:…`, beside the uploads. */
export const completionQueueName = 'completion';

export interface CompletionJobData {
  messageId: string;
  entry: number;
  workspace: string;
  documentIdentifier: string;
  /** Epoch milliseconds of the upload: `maxTime` counts from it. */
  uploadedAt: number;
  /** Polls made so far. */
  polls: number;
}

/** One job per message entry, as for uploads: adding it again (an upload run twice) is a no-op. */
export const completionJobId = (messageId: string, entry: number): string => `${messageId}-${entry}`;

export interface CompletionQueueOptions {
  /** A connection that waits out a Redis restart (`maxRetriesPerRequest: null`). */
  connection: RedisClient;
  keys: KeySpace;
}

export function createCompletionQueue(options: CompletionQueueOptions): Queue<CompletionJobData> {
  return new Queue<CompletionJobData>(completionQueueName, {
    connection: options.connection,
    prefix: options.keys.queuePrefix,
    defaultJobOptions: {
      // Attempts count only failures of the poller itself (Redis gone mid-poll); answers of
      // the service, transient ones included, are handled by completion-policy.ts.
      attempts: 5,
      backoff: { type: 'exponential', delay: 10_000 },
      removeOnComplete: { age: 7 * 24 * 3600 },
      removeOnFail: { age: 7 * 24 * 3600 },
    },
  });
}

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
    await input.ledger.updateEntry(messageId, entry, {
      completion: { state: 'polling', polls: 0, nextPollAt, reason: null },
    });
    await scheduleCompletion(input.queue, { ...input.upload, uploadedAt: input.now }, policy);
  } catch (err) {
    const reason = `could not schedule completion tracking: ${asError(err).message}`;
    input.logger.error({ err, queueId: messageId, entry }, reason);
    await input.ledger
      .updateEntry(messageId, entry, { completion: { state: 'error', polls: 0, nextPollAt: null, reason } })
      .catch((updateErr: unknown) => input.logger.error({ err: updateErr }, 'could not record it either'));
  }
}
