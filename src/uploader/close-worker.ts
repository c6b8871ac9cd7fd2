import { setTimeout as sleep } from 'node:timers/promises';
import type { Worker } from 'bullmq';

/**
 * How long a worker whose jobs have all finished may take to close, ms. A healthy Redis
 * answers BullMQ's closing commands in milliseconds; an unreachable one never does, and
 * then there is nothing left to wait for: no job of this process is running.
 */
const IDLE_CLOSE_GRACE_MS = 3000;

/** The jobs a worker's processor is running, so closing can tell them from BullMQ's own Redis traffic. */
export interface RunningJobs {
  /** Counts `run` until it settles; returns it unchanged. */
  track<T>(run: Promise<T>): Promise<T>;
  /** Resolves once no job is running. */
  finished(): Promise<void>;
  readonly count: number;
}

export function createRunningJobs(): RunningJobs {
  const runs = new Set<Promise<unknown>>();
  return {
    track(run) {
      runs.add(run);
      const forget = () => runs.delete(run);
      run.then(forget, forget);
      return run;
    },
    async finished() {
      while (runs.size > 0) await Promise.allSettled([...runs]);
    },
    get count() {
      return runs.size;
    },
  };
}

export type CloseOutcome = 'closed' | 'deadline' | 'redis unreachable';

/**
 * Closes a BullMQ worker: it takes no new job, and its running jobs get up to `limitMs` to
 * finish. BullMQ's close also waits for its commands to Redis, which never end while Redis
 * is down or frozen; once no job is running, that wait is cut after a short grace instead
 * of taking the whole limit. Whatever is cut off keeps its lock until it lapses, and is
 * handed out again by stall recovery.
 */
export async function closeWorker(worker: Worker, jobs: RunningJobs, limitMs: number): Promise<CloseOutcome> {
  const timers = new AbortController();
  const { signal } = timers;
  const idleFor = async (): Promise<CloseOutcome> => {
    for (;;) {
      await jobs.finished();
      await sleep(IDLE_CLOSE_GRACE_MS, undefined, { signal });
      if (jobs.count === 0) return 'redis unreachable';
    }
  };
  try {
    return await Promise.race([
      worker.close().then((): CloseOutcome => 'closed'),
      sleep(limitMs, 'deadline' as const, { signal }),
      idleFor(),
    ]);
  } finally {
    timers.abort();
  }
}
