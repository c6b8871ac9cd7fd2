/**
 * The webhook delivery schedule, as pure functions: the delay before each retry doubles from
 * `baseMs` up to `capMs`, and the number of attempts is what fits in `windowMs`, so a receiver
 * that is down is tried for about that long (events.retryFor, 24 h by default) and no longer.
 */
export interface WebhookSchedule {
  /** Milliseconds before the first retry (events.retryBaseDelay). */
  baseMs: number;
  /** Milliseconds: the longest wait between two attempts (events.retryMaxDelay). */
  capMs: number;
  /** Milliseconds from the first attempt over which retries go on (events.retryFor). */
  windowMs: number;
}

/** The wait before the next attempt, after `attemptsMade` failed ones (1 for the first retry). */
export function webhookRetryDelay(
  attemptsMade: number,
  schedule: Pick<WebhookSchedule, 'baseMs' | 'capMs'>,
): number {
  const exponent = Math.min(Math.max(attemptsMade - 1, 0), 40);
  return Math.min(schedule.baseMs * 2 ** exponent, schedule.capMs);
}

/** Attempts, the first included, whose waits together first reach `windowMs`. */
export function webhookAttempts(schedule: WebhookSchedule): number {
  let waited = 0;
  let attempts = 1;
  // Bounded: each wait is at least baseMs (≥ 1 ms by the schema), and BullMQ needs a number.
  while (waited < schedule.windowMs && attempts < 10_000) {
    waited += webhookRetryDelay(attempts, schedule);
    attempts += 1;
  }
  return attempts;
}
