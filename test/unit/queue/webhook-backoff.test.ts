import { describe, expect, it } from 'vitest';
import { eventId, wants } from '../../../src/queue/announce-events.ts';
import { webhookAttempts, webhookRetryDelay } from '../../../src/queue/webhook-backoff.ts';

const hour = 3_600_000;

describe('webhook retry schedule', () => {
  it.each([
    [1, 10_000],
    [2, 20_000],
    [9, 2_560_000],
    [10, hour],
    [500, hour],
  ])('waits after %i failed attempts: %i ms', (attemptsMade, delay) => {
    expect(webhookRetryDelay(attemptsMade, { baseMs: 10_000, capMs: hour })).toBe(delay);
  });

  it('spreads the attempts of the default schedule over 24 hours, and no more', () => {
    const schedule = { baseMs: 10_000, capMs: hour, windowMs: 24 * hour };
    const attempts = webhookAttempts(schedule);
    const waits = (count: number) =>
      Array.from({ length: count - 1 }, (_, i) => webhookRetryDelay(i + 1, schedule)).reduce(
        (a, b) => a + b,
        0,
      );
    expect(waits(attempts)).toBeGreaterThanOrEqual(24 * hour);
    expect(waits(attempts - 1)).toBeLessThan(24 * hour);
  });

  it('makes one attempt when retryFor is 0', () => {
    expect(webhookAttempts({ baseMs: 1000, capMs: hour, windowMs: 0 })).toBe(1);
  });
});

describe('receivers and event ids', () => {
  it.each([
    [{ url: 'u' }, true],
    [{ url: 'u', events: ['document.uploaded'] }, true],
    [{ url: 'u', events: ['document.failed'] }, false],
    [{ url: 'u', workspaces: ['ws-a'] }, true],
    [{ url: 'u', workspaces: ['ws-b'] }, false],
    [{ url: 'u', events: ['document.uploaded'], workspaces: ['ws-b'] }, false],
  ])('%j wants document.uploaded of ws-a: %s', (target, wanted) => {
    expect(wants(target, 'document.uploaded', 'ws-a')).toBe(wanted);
  });

  it('gives one fact one id, and another fact another', () => {
    expect(eventId('document.uploaded', ['m1', 'ws-a', 0])).toBe(
      eventId('document.uploaded', ['m1', 'ws-a', 0]),
    );
    expect(eventId('document.uploaded', ['m1', 'ws-a', 0])).not.toBe(
      eventId('document.failed', ['m1', 'ws-a', 0]),
    );
    expect(eventId('document.uploaded', ['m1', 'ws-a', 0])).not.toBe(
      eventId('document.uploaded', ['m1', 'ws-a', 1]),
    );
  });
});
