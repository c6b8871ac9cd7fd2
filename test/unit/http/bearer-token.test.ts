import { describe, expect, it } from 'vitest';
import { createBearerCheck } from '../../../src/http/bearer-token.ts';

describe('createBearerCheck', () => {
  const token = 'a-token-of-some-length-0123';
  const check = createBearerCheck(token);

  it.each<[string | undefined, boolean]>([
    [`Bearer ${token}`, true],
    [`bearer ${token}`, true],
    [`Bearer  ${token} `, true],
    [undefined, false],
    ['', false],
    ['Bearer', false],
    ['Bearer ', false],
    [token, false],
    [`Basic ${token}`, false],
    [`Bearer ${token}x`, false],
    [`Bearer ${token.slice(0, -1)}`, false],
    [`Bearer ${token} extra`, false],
  ])('%j → %s', (header, expected) => {
    expect(check(header)).toBe(expected);
  });

  it('lets everything through when no token is configured', () => {
    expect(createBearerCheck(null)(undefined)).toBe(true);
  });
});
