import { Queue } from 'bullmq';
import type { Logger } from '../logger.ts';
import { type QueueDepth, queueStates } from '../metrics.ts';
import type { KeySpace } from '../record/keys.ts';
import type { RedisClient } from './redis-connections.ts';
import { uploadQueueName } from './upload-queue.ts';

/**
 * The upload queue's depth for the metrics scrape: job counts by state and the age of the
 * oldest waiting job, read from Redis at most once per `cacheMs` however often Prometheus (or
 * several of them) scrape, and given up after `timeoutMs`, so that a scrape with Redis away
 * answers at once, without the queue gauges, rather than waiting out the connection's timeout.
 */

export interface QueueDepthOptions {
  /** The intake connection: no offline queue, so a read fails at once while Redis is away. */
  connection: RedisClient;
  keys: KeySpace;
  logger: Logger;
  /** Milliseconds one reading serves later scrapes; default 5000. */
  cacheMs?: number;
  /** Milliseconds a reading may take before the scrape goes on without it; default 1000. */
  timeoutMs?: number;
  /** Epoch milliseconds; injected for tests, default Date.now. */
  now?: () => number;
}

export interface QueueDepthReader {
  /** The depth, or null when Redis did not answer in time. */
  read(): Promise<QueueDepth | null>;
  /** Idempotent. */
  close(): Promise<void>;
}

export function createQueueDepthReader(options: QueueDepthOptions): QueueDepthReader {
  const { cacheMs = 5000, timeoutMs = 1000 } = options;
  const now = options.now ?? Date.now;
  const log = options.logger.child({ component: 'queue-depth' });
  // A reader of its own on the intake connection: in the worker role there is no producer's queue.
  const queue = new Queue(uploadQueueName, {
    connection: options.connection,
    prefix: options.keys.queuePrefix,
  });
  queue.on('error', (err) => log.debug({ err }, 'queue depth reader error'));
  let cached: { at: number; depth: Promise<QueueDepth | null> } | undefined;
  let failing = false;
  let closing: Promise<void> | undefined;

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
    close() {
      closing ??= queue.close();
      return closing;
    },
  };
}
