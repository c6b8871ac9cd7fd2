import type { Job, Queue } from 'bullmq';
import { asError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { UploadJobData } from '../queue/upload-queue.ts';
import type { MessageLedger } from '../record/message-ledger.ts';
import type { AttachmentState } from '../record/message-record.ts';
import { type FinishedJob, repairOf } from './record-repair.ts';

/**
 * Keeps the message records in step with BullMQ's finished upload jobs. A job's own run writes
 * its entry, and the worker's 'failed' listener writes the entry of a job BullMQ failed as
 * stalled; a process that dies at that instant leaves the entry `queued` or `uploading` for
 * good. This walks the failed and completed sets at start and then periodically, a bounded
 * batch of each per pass, and repairs each entry the job's final state contradicts
 * (record-repair.ts). Repeating a pass changes nothing: a repaired entry needs no repair.
 */

export interface RecordReconcilerOptions {
  /** The upload queue, on a connection that waits out a Redis restart. */
  queue: Queue<UploadJobData>;
  ledger: MessageLedger;
  logger: Logger;
  /** Jobs of each set looked at per pass; default RECONCILE_BATCH. */
  batch?: number;
  /** Milliseconds between passes; default RECONCILE_EVERY_MS. */
  everyMs?: number;
}

export interface RecordReconciler {
  /** Runs the first pass, then schedules the others. */
  start(): Promise<void>;
  /** One pass: resolves with the number of entries repaired. */
  pass(): Promise<number>;
  /** Stops scheduling and waits for a pass in progress. Idempotent. */
  close(): Promise<void>;
}

type FinishedSet = 'failed' | 'completed';

/** Jobs of each finished set one pass looks at: 200, so a pass over a long set is many short ones. */
const RECONCILE_BATCH = 200;
/** Milliseconds between passes: 60 s, so an entry a crash left behind is repaired within minutes. */
const RECONCILE_EVERY_MS = 60_000;

export function createRecordReconciler(options: RecordReconcilerOptions): RecordReconciler {
  const { queue, ledger } = options;
  const batch = options.batch ?? RECONCILE_BATCH;
  const everyMs = options.everyMs ?? RECONCILE_EVERY_MS;
  const log = options.logger.child({ component: 'record-reconciler' });
  // Where the next pass resumes in each set, oldest first; back to 0 after the newest. Jobs
  // added or removed meanwhile shift the positions: one may be looked at twice or wait a round.
  const cursor: Record<FinishedSet, number> = { failed: 0, completed: 0 };
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<number> | undefined;
  let closed = false;

  async function passOver(set: FinishedSet): Promise<number> {
    const start = cursor[set];
    const jobs = (await queue.getJobs([set], start, start + batch - 1, true)) as Job<UploadJobData>[];
    cursor[set] = jobs.length < batch ? 0 : start + jobs.length;
    let repaired = 0;
    for (const job of jobs) {
      const finished: FinishedJob =
        set === 'failed'
          ? { state: 'failed', failedReason: job.failedReason ?? 'failed' }
          : { state: 'completed', returnValue: job.returnvalue };
      if (await repair(ledger, job, finished, log)) repaired++;
    }
    return repaired;
  }

  function pass(): Promise<number> {
    running ??= (async () => {
      try {
        return (await passOver('failed')) + (await passOver('completed'));
      } finally {
        running = undefined;
      }
    })();
    return running;
  }

  function schedule(): void {
    if (closed) return;
    timer = setTimeout(() => {
      pass()
        .catch((err: unknown) => log.warn({ err: asError(err) }, 'record reconciliation pass failed'))
        .finally(schedule);
    }, everyMs);
    // A pending pass never keeps the process alive: close() is how it ends.
    timer.unref();
  }

  return {
    pass,
    async start() {
      try {
        const repaired = await pass();
        log.info({ repaired }, 'message records reconciled with the finished upload jobs');
      } catch (err) {
        // Redis away at start: the next pass tries again; starting the worker matters more.
        log.warn({ err: asError(err) }, 'record reconciliation pass failed');
      }
      schedule();
    },
    async close() {
      closed = true;
      clearTimeout(timer);
      await running?.catch(() => undefined);
    },
  };
}

/**
 * Repairs the job's entry when its final state contradicts it; true when it did. Shared with
 * the worker's 'failed' listener, so both write the same.
 */
export async function repair(
  ledger: MessageLedger,
  job: Job<UploadJobData>,
  finished: FinishedJob,
  log: Logger,
): Promise<boolean> {
  const { messageId, entry } = job.data;
  // Set inside revise, which may run more than once when another writer races it.
  const seen: { transition?: Transition | undefined } = {};
  await ledger.reviseEntry(messageId, entry, (current) => {
    const patch = repairOf(finished, current);
    seen.transition = patch ? { from: current.state, to: patch.state ?? current.state } : undefined;
    return patch;
  });
  if (!seen.transition) return false;
  const { from, to } = seen.transition;
  const reason = finished.state === 'failed' ? finished.failedReason : undefined;
  log.warn(
    { queueId: messageId, jobId: job.id, entry, from, to, ...(reason === undefined ? {} : { reason }) },
    `upload ${finished.state}: its entry ${from} is recorded ${to}`,
  );
  return true;
}

interface Transition {
  from: AttachmentState;
  to: AttachmentState;
}
