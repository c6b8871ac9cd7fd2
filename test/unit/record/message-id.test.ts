import { describe, expect, it } from 'vitest';
import { newMessageId } from '../../../src/record/message-id.ts';

describe('newMessageId', () => {
  it('is nine base-36 digits of the time, then ten of 48 random bits: only [0-9a-z]', () => {
    const id = newMessageId(Date.UTC(2026, 10, 28));
    expect(id).toMatch(/^[0-9a-z]{19}$/);
    expect(id.slice(0, 9)).toBe(Date.UTC(2026, 10, 28).toString(36).padStart(9, '0'));
    expect(Number.parseInt(id.slice(9), 36)).toBeLessThan(2 ** 48);
  });

  it('sorts by time', () => {
    expect(newMessageId(1_000) < newMessageId(2_000)).toBe(true);
  });

  it('never repeats, also across the draws of new random bits', () => {
    // The bits are drawn 256 ids at a time: 5,000 ids span about twenty draws.
    const ids = Array.from({ length: 5_000 }, () => newMessageId(0));
    expect(new Set(ids).size).toBe(ids.length);
    // And every position of the random part varies, so no bits are left unused.
    for (let at = 9; at < 19; at += 1) expect(new Set(ids.map((id) => id[at])).size).toBeGreaterThan(1);
  });
});
