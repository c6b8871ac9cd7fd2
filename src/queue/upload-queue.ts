import { Queue } from 'bullmq';
import type { KeySpace } from '../record/keys.ts';
import type { RedisClient } from '../redis/connections.ts';

/** BullMQ queue name; its keys are `<prefix>:{queue}:uploads:…`. */
export const uploadQueueName = 'uploads';

/** One attachment for one workspace. Holds references only: the bytes stay in the blob. */
export interface UploadJobData {
  messageId: string;
  entry: number;
  workspace: string;
  /** The subaddress tag the workspace was reached by: its upload fields apply; absent: none. */
  subaddress?: string;
  /** The document type whose address the workspace was reached by: sent as `documentType`; absent: none. */
  documentType?: string;
  sha256: string;
  fileName: string;
  /** The canonical MIME type of the detected document type, sent on the file part. */
  contentType: string;
  size: number;
}

/**
 * A stable job id per message entry: adding the same entry twice (a retried commit, a
 * duplicate delivery finishing an earlier one) is a no-op in BullMQ. BullMQ ids may not
 * contain `:`.
 */
export const uploadJobId = (messageId: string, entry: number): string => `${messageId}-${entry}`;

export interface UploadQueueOptions {
  connection: RedisClient;
  keys: KeySpace;
  /** upload.attempts: tries per upload before the entry is marked failed. */
  attempts: number;
  /** retention: seconds finished jobs are kept. */
  retention: { completedJobs: number; failedJobs: number };
}

export function createUploadQueue(options: UploadQueueOptions): Queue<UploadJobData> {
  return new Queue<UploadJobData>(uploadQueueName, {
    connection: options.connection,
    prefix: options.keys.queuePrefix,
    defaultJobOptions: {
      attempts: options.attempts,
      // The delay comes from the retry policy (Retry-After, backoff with jitter): see upload-worker.ts.
      backoff: { type: 'retry-policy' },
      // Kept finished jobs make a repeated add of the same entry a no-op; failed ones stay
      // listable and retryable (`ingest-gateway failed`) for as long as their blobs live.
      removeOnComplete: { age: options.retention.completedJobs },
      removeOnFail: { age: options.retention.failedJobs },
    },
  });
}
