import type { Logger } from '../logger.ts';
import type { RedisClient } from '../redis/connections.ts';
import { isRedisUnavailable } from '../redis/unavailable.ts';

/**
 * Once the service has answered an upload, what the answer means must reach the record even
 * if Redis goes away for a moment: a settlement's write that fails because Redis cannot be
 * reached is repeated once Redis is back, up to a bound, rather than thrown. A thrown write
 * would fail the job, and BullMQ would retry a finished upload, which then rests on the
 * lookup to not upload it twice.
 *
 * The bound is upload.stalledAfter, the job's lock duration. BullMQ renews the lock every
 * quarter to half of that on the worker's own connection, which waits out the outage and
 * renews it as soon as Redis is back; an outage shorter than half the lock keeps it. A longer
 * one may let it lapse: the stall check then hands the job to another run, which finds the
 * entry settled by this one (the entry is written before the job completes) or, if this one
 * gave up first, the document by its lookup. Either way nothing is uploaded twice.
 */

export interface OutageWaitOptions {
  /** The connection the writes go over; its `ready` event says Redis is back. */
  redis: RedisClient;
  /** Milliseconds to wait in all for Redis before giving up (upload.stalledAfter). */
  boundMs: number;
}

/** How often a write is tried again even without a `ready` event, ms: a reconnect's pace. */
const RETRY_EVERY_MS = 1000;

/**
 * Runs `write`; while it fails with Redis unavailable, waits for Redis and runs it again,
 * until `boundMs` have passed since the first failure. `write` must be idempotent. Logs at
 * warn when it starts waiting and when it gives up, at info when Redis came back in time.
 */
export async function settleThroughOutage<T>(
  options: OutageWaitOptions,
  log: Logger,
  what: string,
  write: () => Promise<T>,
): Promise<T> {
  let waitingSince: number | undefined;
  for (;;) {
    try {
      const result = await write();
      if (waitingSince !== undefined) {
        log.info({ what, waitedMs: Date.now() - waitingSince }, 'Redis is back: the settlement went through');
      }
      return result;
    } catch (err) {
      if (!isRedisUnavailable(err)) throw err;
      const now = Date.now();
      if (waitingSince === undefined) {
        waitingSince = now;
        log.warn(
          { what, boundMs: options.boundMs, reason: (err as Error).message },
          'Redis unavailable after the upload was answered: its settlement waits for Redis',
        );
      } else if (now - waitingSince >= options.boundMs) {
        log.warn(
          { what, waitedMs: now - waitingSince, reason: (err as Error).message },
          'Redis still unavailable: the settlement is given up and the job retried (its lookup finds the document)',
        );
        throw err;
      }
      await readyOrAfter(options.redis, Math.min(RETRY_EVERY_MS, waitingSince + options.boundMs - now));
    }
  }
}

/** Resolves when the connection is ready again, or after `ms`, whichever comes first. */
function readyOrAfter(redis: RedisClient, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(ms, 0));
    redis.once('ready', done);
  });
}
