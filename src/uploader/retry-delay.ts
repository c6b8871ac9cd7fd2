/**
 * How long an upload waits before its next attempt. A pure function of the attempt number,
 * the service's `Retry-After` and an injected clock and random source, so the policy is
 * tested as a table (as got's calculate-retry-delay).
 *
 * The jitter is "full jitter" (a uniform draw in [0, min(cap, base * 2^(attempt-1))]), not
 * "decorrelated jitter": decorrelated jitter needs the previous delay, and BullMQ's custom
 * backoff strategy is handed only the attempt count, so full jitter is the one that stays a
 * function of what the worker knows. It also spreads many workers that failed together (a
 * 503 seen by every worker at once) across the whole window, which is the point of jitter.
 */

/** First backoff window, in milliseconds: 1 s. */
export const RETRY_BASE_MS = 1_000;

/** Largest backoff window, in milliseconds: 10 min. Reached from the 11th attempt on. */
export const RETRY_CAP_MS = 10 * 60 * 1_000;

/**
 * Longest wait the gateway accepts from a `Retry-After`, in milliseconds: 1 h. A larger
 * value (or a date far ahead) is more likely a misconfigured proxy than a real plan, and
 * waiting longer would keep the mail's attachments in Redis for no benefit.
 */
export const RETRY_AFTER_MAX_MS = 60 * 60 * 1_000;

export interface RetryDelayInput {
  /** Attempts made so far, 1-based: 1 after the first attempt failed. */
  attempt: number;
  /** The response's `Retry-After` value as received (delay-seconds or HTTP-date), if any. */
  retryAfter?: string | undefined;
  /** Current time in milliseconds since the epoch; an HTTP-date is relative to it. */
  now: number;
  /** Uniform random number in [0, 1), injected so tests are deterministic. */
  random: () => number;
  /** The backoff window (upload.retryBaseDelay / retryMaxDelay), ms; default RETRY_BASE_MS / RETRY_CAP_MS. */
  baseMs?: number;
  capMs?: number;
}

/** Milliseconds to wait before the next attempt. */
export function retryDelayMs(input: RetryDelayInput): number {
  const jitter = clampUnit(input.random());
  const baseMs = input.baseMs ?? RETRY_BASE_MS;
  const backoff = Math.floor(jitter * backoffWindowMs(input.attempt, baseMs, input.capMs ?? RETRY_CAP_MS));
  const serverDelay = parseRetryAfterMs(input.retryAfter, input.now);
  if (serverDelay === undefined) return backoff;
  // The service's delay is a floor, never shortened; up to one base window of jitter is
  // added on top so workers told the same Retry-After do not come back in lockstep.
  return Math.min(RETRY_AFTER_MAX_MS, serverDelay + Math.floor(jitter * baseMs));
}

/** The upper bound of the full-jitter draw for an attempt: base * 2^(attempt-1), capped. */
export function backoffWindowMs(attempt: number, baseMs = RETRY_BASE_MS, capMs = RETRY_CAP_MS): number {
  const exponent = Math.max(0, Math.floor(attempt) - 1);
  // 2^30 windows is far past any cap; stopping the exponent there keeps the arithmetic finite.
  return Math.min(capMs, baseMs * 2 ** Math.min(exponent, 30));
}

/**
 * A `Retry-After` value in milliseconds from `now`, or undefined when absent or unparseable
 * (RFC 9110 §10.2.3: `delay-seconds` is 1*DIGIT, otherwise an HTTP-date). A date in the past
 * means "now".
 */
export function parseRetryAfterMs(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (trimmed === '') return undefined;
  if (/^\d+$/.test(trimmed)) return Math.min(RETRY_AFTER_MAX_MS, Number(trimmed) * 1_000);
  // Only something that looks like a date: Date.parse alone would accept "1.5" or "-3".
  if (!/[a-z]/i.test(trimmed)) return undefined;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.min(RETRY_AFTER_MAX_MS, Math.max(0, at - now));
}

/** A random source outside [0, 1) (a broken stub) must not produce a negative or huge delay. */
function clampUnit(value: number): number {
  if (!Number.isFinite(value) || value < 0) return 0;
  return Math.min(value, 1);
}
