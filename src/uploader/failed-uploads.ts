import type { Queue } from 'bullmq';
import type { RedisClient } from '../queue/redis-connections.ts';
import { isDocumentStored } from '../queue/stored-document.ts';
import type { UploadJobData } from '../queue/upload-queue.ts';
import type { KeySpace } from '../record/keys.ts';
import type { MessageLedger } from '../record/message-ledger.ts';

/** One upload that ended `failed`, as an operator needs to judge and retry it. */
export interface FailedUpload {
  jobId: string;
  messageId: string;
  entry: number;
  workspace: string;
  fileName: string;
  reason: string;
  attempts: number;
  failedAt: string | null;
  /** False when the stored attachment has expired: a retry could not upload anything. */
  retryable: boolean;
}

export interface FailedUploadsOptions {
  queue: Queue<UploadJobData>;
  redis: RedisClient;
  keys: KeySpace;
  ledger: MessageLedger;
}

export interface RetryOutcome {
  retried: string[];
  /** Job ids not found among the failed uploads, or whose attachment has expired. */
  refused: Array<{ jobId: string; reason: string }>;
}

/**
 * The failed uploads in the queue, and their retry. Failed jobs are kept for
 * retention.failedJobs, their blobs for retention.messages: retrying resets the job's
 * attempts and puts it back in the queue with its blob.
 */
export function createFailedUploads(options: FailedUploadsOptions) {
  const { queue, redis, keys, ledger } = options;

  async function describe(job: Awaited<ReturnType<typeof queue.getFailed>>[number]): Promise<FailedUpload> {
    const data = job.data;
    const blobExists = await isDocumentStored(redis, keys, data);
    return {
      jobId: String(job.id),
      messageId: data.messageId,
      entry: data.entry,
      workspace: data.workspace,
      fileName: data.fileName,
      reason: job.failedReason ?? '',
      attempts: job.attemptsMade,
      failedAt: job.finishedOn ? new Date(job.finishedOn).toISOString() : null,
      retryable: blobExists,
    };
  }

  return {
    async list(): Promise<FailedUpload[]> {
      const jobs = await queue.getFailed(0, -1);
      return Promise.all(jobs.map(describe));
    },

    /** `onProgress` hears how many of the jobs are done, for a progress line over a long `--all`. */
    async retry(
      jobIds: readonly string[] | 'all',
      onProgress?: (done: number, total: number) => void,
    ): Promise<RetryOutcome> {
      // One job is looked up by its id; only `--all` reads the whole failed set.
      const wanted =
        jobIds === 'all'
          ? (await queue.getFailed(0, -1)).map((job) => ({ jobId: String(job.id), job }))
          : await Promise.all(jobIds.map(async (jobId) => ({ jobId, job: await queue.getJob(jobId) })));
      const outcome: RetryOutcome = { retried: [], refused: [] };
      for (const [index, { jobId, job }] of wanted.entries()) {
        onProgress?.(index, wanted.length);
        if (!job || (jobIds !== 'all' && !(await job.isFailed()))) {
          outcome.refused.push({ jobId, reason: 'not a failed upload' });
          continue;
        }
        const upload = await describe(job);
        if (!upload.retryable) {
          outcome.refused.push({ jobId, reason: 'the stored attachment has expired' });
          continue;
        }
        // The entry keeps its attempts: they tell the next run that an upload may have reached
        // the service already, so it looks for that document before uploading again. An entry
        // the service already answered for (a job that failed after its settlement was written)
        // is not put back: retrying it could only upload the document twice.
        let settledAs: string | null = null;
        await ledger.reviseEntry(upload.messageId, upload.entry, (current) => {
          if (current.state === 'uploaded' || current.state === 'rejected') {
            settledAs = current.state;
            return null;
          }
          return { state: 'queued', reason: `retried by an operator after: ${upload.reason}` };
        });
        if (settledAs !== null) {
          outcome.refused.push({ jobId, reason: `already ${settledAs}: nothing to retry` });
          continue;
        }
        await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
        outcome.retried.push(jobId);
      }
      onProgress?.(wanted.length, wanted.length);
      return outcome;
    },
  };
}

export type FailedUploads = ReturnType<typeof createFailedUploads>;
