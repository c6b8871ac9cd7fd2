import type { Queue } from 'bullmq';

/** Where one BullMQ queue stands, for the console's overview. */
export interface QueueStanding {
  name: string;
  waiting: number;
  active: number;
  delayed: number;
  failed: number;
  completed: number;
  /** Seconds the oldest job not yet taken (waiting, prioritized or delayed) has been in the queue; null: none. */
  oldestAgeSeconds: number | null;
}

/** The counts of each queue, and the age of its oldest job still to run. */
export async function readQueueOverview(
  queues: readonly Queue[],
  now = Date.now(),
): Promise<QueueStanding[]> {
  return Promise.all(
    queues.map(async (queue) => {
      const counts = await queue.getJobCounts(
        'waiting',
        'prioritized',
        'active',
        'delayed',
        'failed',
        'completed',
      );
      // The oldest of each list still to run: ascending order, first job only.
      const oldest = await Promise.all(
        (['wait', 'prioritized', 'delayed'] as const).map((type) => queue.getJobs(type, 0, 0, true)),
      );
      const stamps = oldest.flat().map((job) => job.timestamp);
      return {
        name: queue.name,
        waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0),
        active: counts.active ?? 0,
        delayed: counts.delayed ?? 0,
        failed: counts.failed ?? 0,
        completed: counts.completed ?? 0,
        oldestAgeSeconds:
          stamps.length === 0 ? null : Math.max(0, Math.round((now - Math.min(...stamps)) / 1000)),
      };
    }),
  );
}
