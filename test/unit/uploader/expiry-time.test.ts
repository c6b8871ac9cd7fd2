import { describe, expect, it } from 'vitest';
import { parseExpiryTime, resolveExpiryTime } from '../../../src/uploader/expiry-time.ts';

const receivedAt = new Date('2025-03-01T10:15:30.250Z');

describe('resolveExpiryTime', () => {
  it.each([
    { text: '90m', expected: '2025-03-01T11:45:30.250Z' },
    { text: '1m', expected: '2025-03-01T10:16:30.250Z' },
    { text: '12h', expected: '2025-03-01T22:15:30.250Z' },
    { text: '30d', expected: '2025-03-31T10:15:30.250Z' },
    // 2025 is not a leap year: 365 days from 1 March 2025 is 1 March 2026.
    { text: '365d', expected: '2026-03-01T10:15:30.250Z' },
    { text: '2w', expected: '2025-03-15T10:15:30.250Z' },
    { text: ' 30d ', expected: '2025-03-31T10:15:30.250Z' },
    { text: '2030-01-31T00:00:00Z', expected: '2030-01-31T00:00:00Z' },
    { text: '2030-01-31T08:30:00.5+02:00', expected: '2030-01-31T08:30:00.5+02:00' },
  ])('$text → $expected', ({ text, expected }) => {
    expect(resolveExpiryTime(text, receivedAt)).toBe(expected);
  });

  it('counts from the receipt, not from when the upload happens', () => {
    const later = new Date(receivedAt.getTime() + 5 * 3_600_000);
    expect(resolveExpiryTime('1d', receivedAt)).not.toBe(resolveExpiryTime('1d', later));
  });

  it('throws for a value the configuration refuses', () => {
    expect(() => resolveExpiryTime('soon', receivedAt)).toThrow(/invalid expiryTime/);
  });
});

describe('parseExpiryTime', () => {
  it.each([
    { text: '90m', value: { kind: 'duration', ms: 5_400_000 } },
    { text: '12h', value: { kind: 'duration', ms: 43_200_000 } },
    { text: '30d', value: { kind: 'duration', ms: 2_592_000_000 } },
    { text: '1w', value: { kind: 'duration', ms: 604_800_000 } },
    { text: '2030-01-31T00:00:00Z', value: { kind: 'instant', iso: '2030-01-31T00:00:00Z' } },
  ])('accepts $text', ({ text, value }) => {
    expect(parseExpiryTime(text)).toEqual({ ok: true, value });
  });

  it.each([
    '',
    '30',
    'd',
    '0d',
    '007d',
    '-1d',
    '1.5h',
    '30 d',
    '30D',
    '30s',
    '1y',
    'P30D',
    '2030-01-31',
    '2030-01-31T00:00:00',
    '2030-13-01T00:00:00Z',
    '2030-02-29T00:00:00Z',
    'tomorrow',
  ])('refuses %j', (text) => {
    const parsed = parseExpiryTime(text);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.problem).toContain(`got ${JSON.stringify(text)}`);
  });

  it('refuses a duration past 100 years', () => {
    expect(parseExpiryTime('5300w')).toEqual({ ok: false, problem: '"5300w" is more than 100 years' });
    expect(parseExpiryTime('5200w').ok).toBe(true);
  });
});
