import type { Logger } from '../logger.ts';
import { parseRetryAfterMs } from './retry-delay.ts';

/**
 * Recovery after an upstream outage. During one, uploads back off with full jitter, doubling up
 * to `upload.retryMaxDelay` (10 min by default): without help, a document accepted early in a
 * long outage waits out its whole window after the service is healthy again. So when an
 * upload succeeds after retries were scheduled, the retries still waiting are promoted to the
 * wait list at once (`upload.promoteAfterRecovery`, docs/architecture.md "Retries").
 *
 * What paces them is what paces every upload: the worker's concurrency. A `Retry-After` the
 * service sent is honoured: no promotion before the latest one seen has passed. One promotion
 * per trouble period, and at most one per `minIntervalMs`, so a flapping service costs a waiting
 * retry at most one attempt per recovery rather than one per success.
 */
export interface RetryPromotion {
  /** An attempt will be retried later; `retryAfter` is the service's header, if it sent one. */
  retryScheduled(retryAfter: string | undefined): void;
  /** An attempt reached the service and settled its document. */
  succeeded(): void;
  /** Resolves when a promotion under way has finished; for the worker's close. */
  settled(): Promise<void>;
}

export interface RetryPromotionOptions {
  /** Moves every delayed upload to the wait list; resolves with how many it moved. */
  promote: () => Promise<number>;
  logger: Logger;
  /** Milliseconds between two promotions at the least; default MIN_INTERVAL_MS. */
  minIntervalMs?: number;
  /** Injected for tests; default Date.now. */
  now?: () => number;
}

/** Ten seconds between promotions at the least: a service that flaps is not hammered. */
const MIN_INTERVAL_MS = 10_000;

export function createRetryPromotion(options: RetryPromotionOptions): RetryPromotion {
  const log = options.logger.child({ component: 'uploader' });
  const now = options.now ?? Date.now;
  const minIntervalMs = options.minIntervalMs ?? MIN_INTERVAL_MS;
  let trouble = false;
  let holdUntil = 0;
  let lastPromotion = Number.NEGATIVE_INFINITY;
  let running: Promise<void> = Promise.resolve();
  let promoting = false;
  let holdAnnounced = 0;

  function promote(): void {
    promoting = true;
    trouble = false;
    lastPromotion = now();
    running = options
      .promote()
      .then((count) => {
        if (count > 0) log.info({ promoted: count }, 'uploads succeed again: waiting retries promoted');
      })
      .catch((err: unknown) => {
        // The retries still run when their backoff ends; only the shortcut is lost.
        log.warn({ err }, 'could not promote the waiting retries');
      })
      .finally(() => {
        promoting = false;
      });
  }

  return {
    retryScheduled(retryAfter) {
      trouble = true;
      const at = now();
      const serverDelay = parseRetryAfterMs(retryAfter, at);
      if (serverDelay !== undefined) holdUntil = Math.max(holdUntil, at + serverDelay);
    },
    succeeded() {
      if (!trouble || promoting) return;
      const at = now();
      if (at < holdUntil) {
        if (holdAnnounced !== holdUntil) {
          holdAnnounced = holdUntil;
          log.debug(
            { until: new Date(holdUntil).toISOString() },
            'waiting retries kept until Retry-After has passed',
          );
        }
        return;
      }
      if (at - lastPromotion < minIntervalMs) return;
      promote();
    },
    settled() {
      return running;
    },
  };
}
