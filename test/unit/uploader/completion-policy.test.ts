import { describe, expect, it } from 'vitest';
import type { ApiResult } from '../../../src/parsing-api/api-result.ts';
import { inspectResponse } from '../../../src/uploader/classify-response.ts';
import {
  childrenDecision,
  decidePoll,
  type PollDecision,
  pollDelayMs,
} from '../../../src/uploader/completion-policy.ts';
import type { CompletionPolicy } from '../../../src/uploader/upload-options-schema.ts';

const policy: CompletionPolicy = {
  via: 'poll',
  firstDelay: 5_000,
  maxDelay: 300_000,
  maxPolls: 300,
  maxTime: 86_400_000,
};

describe('pollDelayMs', () => {
  it.each([
    { polls: 0, expected: 5_000 },
    { polls: 1, expected: 10_000 },
    { polls: 2, expected: 20_000 },
    { polls: 5, expected: 160_000 },
    { polls: 6, expected: 300_000 },
    { polls: 7, expected: 300_000 },
    { polls: 10_000, expected: 300_000 },
  ])('after $polls polls → $expected ms', ({ polls, expected }) => {
    expect(pollDelayMs(polls, policy)).toBe(expected);
  });
});

const document = (meta: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  extractor: 'invoice',
  meta: { identifier: 'Doc1', ...meta },
  data: {},
  ...extra,
});

const response = (status: number, body?: unknown, headers: Record<string, string> = {}): ApiResult => ({
  kind: 'response',
  status,
  headers,
  body,
});

const startedAt = Date.parse('2025-03-01T10:00:00Z');

function decide(result: ApiResult, polls = 1, now = startedAt + 60_000): PollDecision {
  return decidePoll({
    response: inspectResponse({ result, attempt: 1, maxAttempts: Number.POSITIVE_INFINITY }),
    status: result.kind === 'response' ? result.status : null,
    retryAfter: result.kind === 'response' ? result.headers['retry-after'] : undefined,
    polls,
    startedAt,
    now,
    policy,
  });
}

describe('decidePoll', () => {
  it.each<{ name: string; result: ApiResult; polls?: number; now?: number; expected: PollDecision }>([
    {
      name: 'ready → finish ready',
      result: response(200, document({ ready: true, failed: false, readyDt: '2025-03-01T10:00:30Z' })),
      expected: { action: 'finish', state: 'ready', reason: null },
    },
    {
      name: 'ready in snake_case → finish ready',
      result: response(200, document({ ready: true, ready_dt: '2025-03-01T10:00:30Z' })),
      expected: { action: 'finish', state: 'ready', reason: null },
    },
    {
      name: 'failed with error → finish failed with the code',
      result: response(
        200,
        document(
          { ready: true, failed: true },
          { error: { errorCode: 'document_conversion_failed', errorDetail: 'could not convert' } },
        ),
      ),
      expected: {
        action: 'finish',
        state: 'failed',
        reason: 'document_conversion_failed: could not convert',
      },
    },
    {
      name: 'not ready after the first poll → again after 10 s',
      result: response(200, document({ ready: false })),
      expected: { action: 'poll-again', delayMs: 10_000, reason: null },
    },
    {
      name: 'not ready after the third poll → again after 40 s',
      result: response(200, document({ ready: null })),
      polls: 3,
      expected: { action: 'poll-again', delayMs: 40_000, reason: null },
    },
    {
      name: '503 → again, naming it',
      result: response(503),
      expected: { action: 'poll-again', delayMs: 10_000, reason: 'HTTP 503 Service Unavailable' },
    },
    {
      name: '429 with a Retry-After longer than the interval → the Retry-After',
      result: response(429, undefined, { 'retry-after': '120' }),
      expected: { action: 'poll-again', delayMs: 120_000, reason: 'HTTP 429 Too Many Requests' },
    },
    {
      name: 'a network error → again',
      result: { kind: 'network', error: { code: 'ECONNRESET', message: 'reset' } },
      expected: { action: 'poll-again', delayMs: 10_000, reason: 'network error ECONNRESET: reset' },
    },
    {
      name: '401 → again (the key may be fixed meanwhile)',
      result: response(401),
      expected: {
        action: 'poll-again',
        delayMs: 10_000,
        reason: 'the service refused the API key (HTTP 401): HTTP 401 Unauthorized',
      },
    },
    {
      name: '404 → stop, not found',
      result: response(404, {
        type: 'client_error',
        errors: [{ attr: null, code: 'not_found', detail: 'Not found.' }],
      }),
      expected: {
        action: 'stop',
        state: 'not-found',
        reason: 'the service has no such document (not_found: Not found.)',
      },
    },
    {
      name: '400 → stop, error',
      result: response(400, {
        type: 'validation_error',
        errors: [{ attr: 'format', code: 'invalid', detail: 'x' }],
      }),
      expected: { action: 'stop', state: 'error', reason: 'HTTP 400 Bad Request: format: invalid: x' },
    },
    {
      name: 'a 200 that is not a Document → stop, error',
      result: response(200, { hello: 'world' }),
      expected: {
        action: 'stop',
        state: 'error',
        reason: expect.stringMatching(/^HTTP 200 OK whose body is not a Document/) as unknown as string,
      },
    },
    {
      name: 'not ready at maxPolls → gave up',
      result: response(200, document({ ready: false })),
      polls: 300,
      expected: { action: 'stop', state: 'gave-up', reason: 'not ready after 300 polls' },
    },
    {
      name: 'still 503 at maxPolls → gave up, naming the last answer',
      result: response(503),
      polls: 300,
      expected: {
        action: 'stop',
        state: 'gave-up',
        reason: 'not ready (last poll: HTTP 503 Service Unavailable) after 300 polls',
      },
    },
    {
      name: 'not ready at maxTime → gave up',
      result: response(200, document({ ready: false })),
      now: startedAt + 86_400_000,
      expected: { action: 'stop', state: 'gave-up', reason: 'not ready 24 h after the upload' },
    },
    {
      name: 'not ready shortly before maxTime → the last poll at the deadline',
      result: response(200, document({ ready: false })),
      polls: 50,
      now: startedAt + 86_400_000 - 1_000,
      expected: { action: 'poll-again', delayMs: 1_000, reason: null },
    },
    {
      name: 'ready at the last allowed poll still counts',
      result: response(200, document({ ready: true })),
      polls: 300,
      now: startedAt + 86_400_000,
      expected: { action: 'finish', state: 'ready', reason: null },
    },
  ])('$name', ({ result, polls, now, expected }) => {
    expect(decide(result, polls, now)).toEqual(expected);
  });
});

describe('childrenDecision', () => {
  const ready: PollDecision = { action: 'finish', state: 'ready', reason: null };
  const decide = (decisions: Record<string, PollDecision>) => {
    const asked: string[] = [];
    return {
      asked,
      decideChild: async (identifier: string) => {
        asked.push(identifier);
        return decisions[identifier] ?? ready;
      },
    };
  };
  const children = [{ identifier: 'c1' }, { identifier: 'c2' }, { identifier: 'c3' }];

  it('is parsed when every child is', async () => {
    const { asked, decideChild } = decide({});
    expect(await childrenDecision(children, decideChild)).toEqual(ready);
    expect(asked).toEqual(['c1', 'c2', 'c3']);
  });

  it('polls again at the first child not parsed yet, reading no further', async () => {
    const { asked, decideChild } = decide({ c2: { action: 'poll-again', delayMs: 5_000, reason: null } });
    expect(await childrenDecision(children, decideChild)).toEqual({
      action: 'poll-again',
      delayMs: 5_000,
      reason: 'child document c2 not parsed yet',
    });
    expect(asked).toEqual(['c1', 'c2']);
  });

  it('fails, naming each child that failed, once every child is settled', async () => {
    const { decideChild } = decide({
      c1: { action: 'finish', state: 'failed', reason: 'document_conversion_failed: cut short' },
      c3: { action: 'finish', state: 'failed', reason: null },
    });
    expect(await childrenDecision(children, decideChild)).toEqual({
      action: 'finish',
      state: 'failed',
      reason: 'child documents failed: c1 (document_conversion_failed: cut short), c3 (failed)',
    });
  });

  it('stops when polling a child stops, saying which', async () => {
    const { decideChild } = decide({
      c1: { action: 'stop', state: 'not-found', reason: 'the service has no such document (gone)' },
    });
    expect(await childrenDecision(children, decideChild)).toEqual({
      action: 'stop',
      state: 'not-found',
      reason: 'child document c1: the service has no such document (gone)',
    });
  });
});
