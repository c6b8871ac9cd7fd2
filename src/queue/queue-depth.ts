import type { Queue } from 'bullmq';
import type { Logger } from '../logger.ts';
import { type QueueDepth, queueStates } from '../metrics.ts';
import type { UploadJobData } from './upload-queue.ts';

/**
 * The upload queue's depth for the metrics scrape: job counts by state and the age of the
 * oldest waiting job, read from Redis at most once per `cacheMs` however often Prometheus (or
 * several of them) scrape, and given up after `timeoutMs`, so that a scrape with Redis away
 * answers at once, without the queue gauges, rather than waiting out the connection's timeout.
 */

export interface QueueDepthOptions {
  /**
   * The upload queue on a fail-fast connection (no offline queue), so a read fails at once
   * while Redis is away.
   */
  queue: Queue<UploadJobData>;
  logger: Logger;
  /** Milliseconds one reading serves later scrapes; default CACHE_MS. */
  cacheMs?: number;
  /** Milliseconds a reading may take before the scrape goes on without it; default TIMEOUT_MS. */
  timeoutMs?: number;
  /** Epoch milliseconds; injected for tests, default Date.now. */
  now?: () => number;
}

export interface QueueDepthReader {
  /** The depth, or null when Redis did not answer in time. */
  read(): Promise<QueueDepth | null>;
}

/** 5 s: scrapes closer together than that, from one Prometheus or several, share one reading. */
const CACHE_MS = 5000;
/** 1 s: a scrape answers within a second even with Redis away. */
const TIMEOUT_MS = 1000;

export function createQueueDepthReader(options: QueueDepthOptions): QueueDepthReader {
  const { cacheMs = CACHE_MS, timeoutMs = TIMEOUT_MS } = options;
  const now = options.now ?? Date.now;
  const log = options.logger.child({ component: 'queue-depth' });
  const { queue } = options;
  let cached: { at: number; depth: Promise<QueueDepth | null> } | undefined;
  let failing = false;

  async function readNow(): Promise<QueueDepth> {
    const [counts, oldest] = await Promise.all([
      queue.getJobCounts(...queueStates),
      // getWaiting lists oldest first: its first job is the next to be taken.
      queue.getWaiting(0, 0),
    ]);
    const addedAt = oldest[0]?.timestamp;
    return {
      counts: {
        waiting: counts.waiting ?? 0,
        active: counts.active ?? 0,
        delayed: counts.delayed ?? 0,
        failed: counts.failed ?? 0,
      },
      oldestWaitingSeconds: addedAt === undefined ? 0 : Math.max(0, (now() - addedAt) / 1000),
    };
  }

  async function readInTime(): Promise<QueueDepth | null> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      const depth = await Promise.race([readNow(), timeout]);
      failing = false;
      return depth;
    } catch (err) {
      // Once per outage, not once per scrape; redis_up says the rest.
      if (!failing) log.warn({ err }, 'upload queue depth not read: its gauges are left out');
      failing = true;
      return null;
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    read() {
      const at = now();
      if (!cached || at - cached.at >= cacheMs) cached = { at, depth: readInTime() };
      return cached.depth;
    },
  };
}
