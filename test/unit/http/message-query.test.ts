import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor, parseMessageQuery } from '../../../src/http/message-query.ts';

const parse = (query: string) => parseMessageQuery(new URLSearchParams(query));

describe('parseMessageQuery', () => {
  it('defaults: every message, 20 a page, from the newest, no wait', () => {
    expect(parse('')).toEqual({
      filter: { from: null, to: null, workspace: null, state: null, q: null, since: null },
      limit: 20,
      after: null,
      wait: null,
    });
  });

  it('reads every parameter', () => {
    const cursor = encodeCursor({ receivedAt: 1714564800000, id: 'm1' });
    expect(
      parse(
        `from=a&to=b&workspace=ws&state=failed&q=x%20y&since=2024-05-01T14:00:00%2B02:00&limit=5&cursor=${cursor}&wait=30`,
      ),
    ).toEqual({
      filter: { from: 'a', to: 'b', workspace: 'ws', state: 'failed', q: 'x y', since: 1714564800000 },
      limit: 5,
      after: { receivedAt: 1714564800000, id: 'm1' },
      wait: 30,
    });
  });

  it.each([
    ['unknown=1', 'unknown parameter(s): unknown'],
    [
      'state=done',
      'state: expected one of queued, uploading, uploaded, rejected, failed, skipped, held, discarded',
    ],
    ['from=', 'from: must not be empty'],
    ['since=2024-05-01', 'since: expected an ISO 8601 time, e.g. 2024-05-01T12:00:00Z'],
    ['limit=0', 'limit: Too small: expected number to be >=1'],
    ['limit=abc', 'limit: Invalid input: expected number, received NaN'],
    ['wait=0', 'wait: Too small: expected number to be >=1'],
    ['wait=1.5', 'wait: Invalid input: expected int, received number'],
    ['cursor=%%%', 'cursor: not a cursor this API gave (use nextCursor of the previous page)'],
    ['to=a&to=b', 'to: given more than once'],
  ])('refuses %s: %s', (query, problem) => {
    expect(parse(query)).toEqual({ problems: [problem] });
  });

  it('lists every problem at once', () => {
    const result = parse('state=done&limit=0&x=1');
    expect('problems' in result && result.problems).toHaveLength(3);
  });
});

describe('cursor', () => {
  it('round-trips a position and refuses what it did not make', () => {
    const position = { receivedAt: 1714564800123, id: '0lv3x2k9a0123456789' };
    expect(decodeCursor(encodeCursor(position))).toEqual(position);
    expect(decodeCursor(Buffer.from('12.ID-with-caps').toString('base64url'))).toBeNull();
    expect(decodeCursor('')).toBeNull();
  });
});
