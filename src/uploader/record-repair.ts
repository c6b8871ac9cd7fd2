import type { EntryPatch } from '../record/message-ledger.ts';
import type { AttachmentEntry } from '../record/message-record.ts';
import { isSettled } from './next-step.ts';

/**
 * What an entry must say once its upload job has finished in BullMQ, as a pure function of
 * the job's final state and the entry as it is: null when it says so already. The job's own
 * run writes the entry before the job finishes; this repairs an entry a crash left behind
 * (a job BullMQ failed as stalled while no worker lived to hear of it, a worker that died
 * between its writes), so the record follows from the job's state in every case.
 */

export type FinishedJob =
  /** Failed for good: attempts spent, stalled too often, or a permanent failure. */
  | { state: 'failed'; failedReason: string }
  /** Completed, with the processor's return value (upload-ending.ts UploadResult). */
  | { state: 'completed'; returnValue: unknown };

/** The entry states a finished job leaves wrong: it was still on its way. */
const IN_FLIGHT = new Set<AttachmentEntry['state']>(['queued', 'uploading']);

export function repairOf(job: FinishedJob, entry: AttachmentEntry): EntryPatch | null {
  if (job.state === 'failed') {
    if (!IN_FLIGHT.has(entry.state)) return null;
    return { state: 'failed', reason: `gave up: ${job.failedReason}` };
  }
  if (isSettled(entry)) return null;
  const result = settledResult(job.returnValue);
  if (!result) return null;
  return { state: result.state, documentIdentifier: result.documentIdentifier, reason: result.reason };
}

interface SettledResult {
  documentIdentifier: string;
  state: 'uploaded' | 'rejected';
  reason: string | null;
}

/**
 * The return value of a completed upload job, when it names the settlement; jobs completed
 * before the return value carried the state name only the document and are left alone.
 */
export function settledResult(value: unknown): SettledResult | null {
  if (typeof value !== 'object' || value === null) return null;
  const { documentIdentifier, state, reason } = value as Record<string, unknown>;
  if (typeof documentIdentifier !== 'string' || documentIdentifier === '') return null;
  if (state !== 'uploaded' && state !== 'rejected') return null;
  return { documentIdentifier, state, reason: typeof reason === 'string' ? reason : null };
}
