import { Queue } from 'bullmq';
import type { KeySpace } from '../record/keys.ts';
import type { RedisClient } from '../redis/connections.ts';

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
      // the service, transient ones included, are handled by the uploader's completion policy.
      attempts: 5,
      backoff: { type: 'exponential', delay: 10_000 },
      removeOnComplete: { age: 7 * 24 * 3600 },
      removeOnFail: { age: 7 * 24 * 3600 },
    },
  });
}
