import { describe, expect, it } from 'vitest';
import { clientSubject, slidingWindowCount } from '../../../src/smtp/rate-limit.ts';

describe('slidingWindowCount', () => {
  it.each([
    // current, previous, elapsed share of the current window → estimate
    [1, 0, 0, 1],
    [5, 10, 0, 15],
    [5, 10, 0.5, 10],
    [5, 10, 0.9, 6],
    [5, 10, 1, 5],
    [0, 0, 0.3, 0],
  ])('current %i, previous %i, %f into the window → %f', (current, previous, elapsed, expected) => {
    expect(slidingWindowCount(current, previous, elapsed)).toBeCloseTo(expected);
  });
});

describe('clientSubject', () => {
  it.each([
    ['192.0.2.1', '192.0.2.1'],
    ['::ffff:192.0.2.1', '192.0.2.1'],
    ['2001:db8:1:2:3:4:5:6', '2001:0db8:0001:0002::/64'],
    ['2001:db8:1:2::99', '2001:0db8:0001:0002::/64'],
    ['2001:DB8:1:2:ffff::1', '2001:0db8:0001:0002::/64'],
    ['2001:db8::1', '2001:0db8:0000:0000::/64'],
    ['::1', '0000:0000:0000:0000::/64'],
    ['64:ff9b::192.0.2.33', '0064:ff9b:0000:0000::/64'],
    ['1:2:3:4:5:6:1.2.3.4', '0001:0002:0003:0004::/64'],
  ])('%s is counted as %s', (address, subject) => {
    expect(clientSubject(address)).toBe(subject);
  });
});
