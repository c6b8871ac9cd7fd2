import type { Queue } from 'bullmq';
import * as z from 'zod/mini';
import type { UploadJobData } from '../queue/upload-queue.ts';
import type { KeySpace } from '../record/keys.ts';
import type { MessageLedger } from '../record/message-ledger.ts';
import type { RedisClient } from '../redis/connections.ts';
import { isDocumentStored } from '../store/stored-document.ts';

/** One upload that ended `failed`, as an operator needs to judge and retry it. */
export const failedUploadSchema = z.object({
  jobId: z.string().check(z.describe('<message id>-<entry>')),
  messageId: z.string(),
  entry: z.int().check(z.gte(0)),
  workspace: z.string(),
  fileName: z.string(),
  reason: z.string(),
  attempts: z.int().check(z.gte(0)),
  failedAt: z.nullable(z.iso.datetime()),
  retryable: z
    .boolean()
    .check(z.describe('False when the stored attachment has expired: a retry could not upload anything')),
});
export type FailedUpload = z.output<typeof failedUploadSchema>;

export interface FailedUploadsOptions {
  queue: Queue<UploadJobData>;
  redis: RedisClient;
  keys: KeySpace;
  ledger: MessageLedger;
}

export const retryOutcomeSchema = z.object({
  retried: z.array(z.string()).check(z.describe('Job ids put back in the queue')),
  refused: z
    .array(z.object({ jobId: z.string(), reason: z.string() }))
    .check(
      z.describe(
        'Job ids not put back, and why: no failed upload, its stored attachment expired, or already settled',
      ),
    ),
});
export type RetryOutcome = z.output<typeof retryOutcomeSchema>;

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
