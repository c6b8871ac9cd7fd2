import { type Job, UnrecoverableError, WaitingError } from 'bullmq';
import type { Logger } from '../logger.ts';
import type { UploadJobData } from '../queue/upload-queue.ts';
import type { SettledState, Settlement } from './settle-attempt.ts';

/**
 * How an upload attempt's ending reaches BullMQ: a completed job's return value, or the error
 * that makes BullMQ retry the job, fail it, or put it back to wait.
 */

/**
 * A permanent failure the attempt recorded on the entry before throwing it; BullMQ fails the
 * job without retrying. Other UnrecoverableErrors come from BullMQ itself (a job that stalled
 * more than the allowed number of times) and are recorded by the worker's 'failed' listener.
 */
export class RecordedUploadFailure extends UnrecoverableError {
  constructor(reason: string) {
    super(reason);
    this.name = 'RecordedUploadFailure';
  }
}

/** A transient failure: BullMQ retries it after the delay the retry policy chose. */
export class RetryableUploadError extends Error {
  readonly retryAfter: string | undefined;
  constructor(reason: string, retryAfter: string | undefined) {
    super(reason);
    this.name = 'RetryableUploadError';
    this.retryAfter = retryAfter;
  }
}

/** A completed job's return value: what its entry says, so the record can be checked against it. */
export interface UploadResult {
  documentIdentifier: string;
  state: SettledState;
  reason: string | null;
}

/** The ending, as BullMQ understands it: a result, or the error that retries, fails or waits. */
export async function conclude(
  job: Job<UploadJobData>,
  log: Logger,
  { outcome, ending }: Settlement,
  token: string | undefined,
): Promise<UploadResult> {
  switch (ending.end) {
    case 'done':
      // A skipped run settled nothing itself: the earlier run announced the document.
      if (outcome) {
        log.info(
          { documentIdentifier: ending.documentIdentifier, reason: ending.reason },
          `document ${outcome}`,
        );
      }
      return { documentIdentifier: ending.documentIdentifier, state: ending.state, reason: ending.reason };
    case 'retry':
      log.warn({ reason: ending.reason }, 'upload will be retried');
      throw new RetryableUploadError(ending.reason, ending.retryAfter);
    case 'fail': {
      const requestError = ending.requestError === undefined ? {} : { requestError: ending.requestError };
      log.warn({ reason: ending.reason, ...requestError }, 'upload failed');
      throw new RecordedUploadFailure(ending.reason);
    }
    case 'hand-back':
      log.error(
        { status: ending.status },
        'API key refused; uploads paused until the key is corrected (SIGHUP)',
      );
      // pause(true) did not wait for the active jobs, this one among them: it goes back untouched.
      await job.moveToWait(token);
      throw new WaitingError();
  }
}
