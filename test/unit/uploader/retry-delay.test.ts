import { describe, expect, it } from 'vitest';
import {
  backoffWindowMs,
  parseRetryAfterMs,
  RETRY_AFTER_MAX_MS,
  RETRY_CAP_MS,
  retryDelayMs,
} from '../../../src/uploader/retry-delay.ts';

const NOW = Date.UTC(2025, 0, 1, 0, 0, 0);
const at = (random: number) => () => random;

describe('retryDelayMs without Retry-After (full jitter)', () => {
  it.each([
    { attempt: 1, random: 0.5, expected: 500 },
    { attempt: 1, random: 0, expected: 0 },
    { attempt: 2, random: 0.5, expected: 1_000 },
    { attempt: 3, random: 0.999, expected: 3_996 },
    { attempt: 10, random: 0.5, expected: 256_000 },
    // 2^10 s is past the 10 min cap.
    { attempt: 11, random: 0.5, expected: RETRY_CAP_MS / 2 },
    { attempt: 1_000, random: 0.5, expected: RETRY_CAP_MS / 2 },
    // A nonsensical attempt number is treated as the first.
    { attempt: 0, random: 0.5, expected: 500 },
    { attempt: -3, random: 0.5, expected: 500 },
    // A broken random source cannot produce a negative or oversized delay.
    { attempt: 2, random: -1, expected: 0 },
    { attempt: 2, random: Number.NaN, expected: 0 },
    { attempt: 2, random: 7, expected: 2_000 },
  ])('attempt $attempt with random $random waits $expected ms', ({ attempt, random, expected }) => {
    expect(retryDelayMs({ attempt, now: NOW, random: at(random) })).toBe(expected);
  });

  it('stays within [0, window] for every attempt', () => {
    for (let attempt = 1; attempt <= 40; attempt += 1) {
      for (const random of [0, 0.25, 0.999_999]) {
        const delay = retryDelayMs({ attempt, now: NOW, random: at(random) });
        expect(delay).toBeGreaterThanOrEqual(0);
        expect(delay).toBeLessThanOrEqual(backoffWindowMs(attempt));
        expect(delay).toBeLessThanOrEqual(RETRY_CAP_MS);
      }
    }
  });
});

describe('retryDelayMs with Retry-After', () => {
  it.each([
    { retryAfter: '30', random: 0, expected: 30_000 },
    { retryAfter: '30', random: 0.5, expected: 30_500 },
    { retryAfter: ' 10 ', random: 0, expected: 10_000 },
    { retryAfter: '0', random: 0, expected: 0 },
    { retryAfter: 'Wed, 01 Jan 2025 00:02:00 GMT', random: 0, expected: 120_000 },
    { retryAfter: 'Wed, 01 Jan 2025 00:02:00 GMT', random: 0.25, expected: 120_250 },
    // A date already past means "now"; only the jitter remains.
    { retryAfter: 'Tue, 31 Dec 2024 23:00:00 GMT', random: 0.5, expected: 500 },
    // Capped at one hour, whether in seconds or as a date.
    { retryAfter: '7200', random: 0.5, expected: RETRY_AFTER_MAX_MS },
    { retryAfter: 'Wed, 01 Jan 2025 03:00:00 GMT', random: 0, expected: RETRY_AFTER_MAX_MS },
  ])('$retryAfter with random $random waits $expected ms', ({ retryAfter, random, expected }) => {
    expect(retryDelayMs({ attempt: 1, retryAfter, now: NOW, random: at(random) })).toBe(expected);
  });

  it('is used instead of a longer backoff window, never shortened by jitter', () => {
    for (const random of [0, 0.3, 0.999]) {
      const delay = retryDelayMs({ attempt: 14, retryAfter: '45', now: NOW, random: at(random) });
      expect(delay).toBeGreaterThanOrEqual(45_000);
      expect(delay).toBeLessThan(46_000);
    }
  });

  it.each(['soon', '', '   ', '-5', '1.5', '30s', 'Someday, 99 Foo 2025'])(
    'falls back to the backoff when Retry-After is %j',
    (retryAfter) => {
      expect(retryDelayMs({ attempt: 3, retryAfter, now: NOW, random: at(0.5) })).toBe(2_000);
    },
  );
});

describe('parseRetryAfterMs', () => {
  it.each([
    { value: undefined, expected: undefined },
    { value: '120', expected: 120_000 },
    { value: 'Wed, 01 Jan 2025 00:00:05 GMT', expected: 5_000 },
    // RFC 9110 asks recipients to accept the obsolete RFC 850 form too.
    { value: 'Wednesday, 01-Jan-25 00:00:05 GMT', expected: 5_000 },
    { value: 'nonsense', expected: undefined },
  ])('$value → $expected', ({ value, expected }) => {
    expect(parseRetryAfterMs(value, NOW)).toBe(expected);
  });
});

describe('retryDelayMs with a configured window', () => {
  it.each([
    [1, 100],
    [2, 200],
    [5, 1600],
    [9, 2000],
  ])('attempt %i draws from a window of %i ms with base 100 and cap 2000', (attempt, window) => {
    expect(retryDelayMs({ attempt, now: 0, random: () => 0.999_999, baseMs: 100, capMs: 2000 })).toBe(
      window - 1,
    );
  });
});
