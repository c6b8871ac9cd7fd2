import { describe, expect, it } from 'vitest';
import type { ApiResult } from '../../../src/parsing-api/api-result.ts';
import { parseDocument } from '../../../src/parsing-api/document-schema.ts';
import type { SettledEntry } from '../../../src/uploader/next-step.ts';
import {
  type AnswerFacts,
  failure,
  finishSettled,
  retryLater,
  type Settlement,
  settleAnswer,
} from '../../../src/uploader/settle-attempt.ts';

const response = (status: number, body?: unknown, headers: Record<string, string> = {}): ApiResult => ({
  kind: 'response',
  status,
  headers,
  body,
});
const answer = (result: ApiResult, patch: Partial<AnswerFacts> = {}): AnswerFacts => ({
  attempt: 1,
  maxAttempts: 3,
  answer: result,
  keyReplaced: false,
  ...patch,
});

const pending = { meta: { identifier: 'DOC-1', ready: false, failed: false, readyDt: null } };
const warned = {
  ...pending,
  warnings: [{ warningCode: 'too_many_pages', warningDetail: 'ten' }],
};
const duplicate = {
  meta: { identifier: 'DOC-2', ready: true, failed: true },
  error: { errorCode: 'duplicate', errorDetail: 'of DOC-0' },
};
/** An earlier upload found by the lookup, rejected, its error only in meta. */
const rejectedInMeta = {
  meta: { identifier: 'DOC-3', failed: true, errorCode: 'document_conversion_failed', errorDetail: 'bad' },
};
const requestError = {
  type: 'validation_error',
  errors: [{ attr: 'language', code: 'invalid_choice', detail: '"xx" is not a valid choice.' }],
};
const refusedReason = 'the parsing service refused the API key (HTTP 401): HTTP 401 Unauthorized';
const replaced = 'the API key was replaced while this request was in flight';
const doc = (body: unknown) => parseDocument(body);

describe('settleAnswer', () => {
  it.each<{ name: string; facts: AnswerFacts; expected: Settlement }>([
    {
      name: 'uploaded: index, record, release, then track completion',
      facts: answer(response(201, pending)),
      expected: {
        outcome: 'uploaded',
        actions: [
          { action: 'index-document', documentIdentifier: 'DOC-1' },
          {
            action: 'update-entry',
            change: {
              state: 'uploaded',
              reason: null,
              documentIdentifier: 'DOC-1',
              warnings: [],
              attempts: 1,
              ready: false,
              failed: false,
              readyDt: null,
              error: null,
            },
          },
          { action: 'release-blob' },
          { action: 'track-completion', documentIdentifier: 'DOC-1', document: doc(pending) },
        ],
        ending: { end: 'done', state: 'uploaded', documentIdentifier: 'DOC-1', reason: null },
      },
    },
    {
      name: 'uploaded on a retry, with warnings: the attempt and the warnings are recorded',
      facts: answer(response(201, warned), { attempt: 2 }),
      expected: {
        outcome: 'uploaded',
        actions: [
          { action: 'index-document', documentIdentifier: 'DOC-1' },
          {
            action: 'update-entry',
            change: {
              state: 'uploaded',
              reason: null,
              documentIdentifier: 'DOC-1',
              warnings: [{ warningCode: 'too_many_pages', warningDetail: 'ten' }],
              attempts: 2,
              ready: false,
              failed: false,
              readyDt: null,
              error: null,
            },
          },
          { action: 'release-blob' },
          { action: 'track-completion', documentIdentifier: 'DOC-1', document: doc(warned) },
        ],
        ending: { end: 'done', state: 'uploaded', documentIdentifier: 'DOC-1', reason: null },
      },
    },
    {
      name: 'a rejected duplicate: settled with its error, never tracked, never retried',
      facts: answer(response(201, duplicate)),
      expected: {
        outcome: 'rejected',
        actions: [
          { action: 'index-document', documentIdentifier: 'DOC-2' },
          {
            action: 'update-entry',
            change: {
              state: 'rejected',
              reason: 'duplicate: of DOC-0',
              documentIdentifier: 'DOC-2',
              warnings: [],
              attempts: 1,
              ready: true,
              failed: true,
              readyDt: null,
              error: { errorCode: 'duplicate', errorDetail: 'of DOC-0' },
            },
          },
          { action: 'release-blob' },
        ],
        ending: {
          end: 'done',
          state: 'rejected',
          documentIdentifier: 'DOC-2',
          reason: 'duplicate: of DOC-0',
        },
      },
    },
    {
      name: 'an adopted earlier document rejected in meta only',
      facts: answer(response(200, rejectedInMeta), { attempt: 2 }),
      expected: {
        outcome: 'rejected',
        actions: [
          { action: 'index-document', documentIdentifier: 'DOC-3' },
          {
            action: 'update-entry',
            change: {
              state: 'rejected',
              reason: 'document_conversion_failed: bad',
              documentIdentifier: 'DOC-3',
              warnings: [],
              attempts: 2,
              ready: null,
              failed: true,
              readyDt: null,
              error: { errorCode: 'document_conversion_failed', errorDetail: 'bad' },
            },
          },
          { action: 'release-blob' },
        ],
        ending: {
          end: 'done',
          state: 'rejected',
          documentIdentifier: 'DOC-3',
          reason: 'document_conversion_failed: bad',
        },
      },
    },
    {
      name: 'a 503 retries later, honouring Retry-After, and the entry says why it waits',
      facts: answer(response(503, undefined, { 'retry-after': '30' })),
      expected: {
        outcome: 'retry',
        actions: [
          {
            action: 'update-entry',
            change: { state: 'queued', reason: 'HTTP 503 Service Unavailable', attempts: 1 },
          },
        ],
        ending: { end: 'retry', reason: 'HTTP 503 Service Unavailable', retryAfter: '30' },
      },
    },
    {
      name: 'a dropped connection retries later without a Retry-After',
      facts: answer({ kind: 'network', error: { code: 'ECONNRESET', message: 'reset' } }, { attempt: 2 }),
      expected: {
        outcome: 'retry',
        actions: [
          {
            action: 'update-entry',
            change: { state: 'queued', reason: 'network error ECONNRESET: reset', attempts: 2 },
          },
        ],
        ending: { end: 'retry', reason: 'network error ECONNRESET: reset', retryAfter: undefined },
      },
    },
    {
      name: 'a transient failure at the last attempt fails for good',
      facts: answer(response(502, 'bad gateway'), { attempt: 3 }),
      expected: {
        outcome: 'failed',
        actions: [
          {
            action: 'update-entry',
            change: {
              requestError: null,
              state: 'failed',
              reason: 'gave up after 3 attempts: HTTP 502 Bad Gateway: bad gateway: bad gateway',
              attempts: 3,
            },
          },
        ],
        ending: {
          end: 'fail',
          reason: 'gave up after 3 attempts: HTTP 502 Bad Gateway: bad gateway: bad gateway',
          requestError: null,
        },
      },
    },
    {
      name: 'a 400 with a RequestError fails at once, recording and logging the RequestError',
      facts: answer(response(400, requestError)),
      expected: {
        outcome: 'failed',
        actions: [
          {
            action: 'update-entry',
            change: {
              requestError,
              state: 'failed',
              reason: 'HTTP 400 Bad Request: language: invalid_choice: "xx" is not a valid choice.',
              attempts: 1,
            },
          },
        ],
        ending: {
          end: 'fail',
          reason: 'HTTP 400 Bad Request: language: invalid_choice: "xx" is not a valid choice.',
          requestError,
        },
      },
    },
    {
      name: 'a 2xx whose body is unreadable fails: a retry could duplicate the document',
      facts: answer({
        kind: 'response',
        status: 201,
        headers: {},
        body: undefined,
        bodyError: 'invalid JSON',
      }),
      expected: {
        outcome: 'failed',
        actions: [
          {
            action: 'update-entry',
            change: {
              requestError: null,
              state: 'failed',
              reason:
                'HTTP 201 Created with an unreadable body; not retried, since the document may exist and a retry could duplicate it: invalid JSON',
              attempts: 1,
            },
          },
        ],
        ending: {
          end: 'fail',
          reason:
            'HTTP 201 Created with an unreadable body; not retried, since the document may exist and a retry could duplicate it: invalid JSON',
          requestError: null,
        },
      },
    },
    {
      name: 'a refused key (401) pauses the uploads and hands the job back, saying why',
      facts: answer(response(401)),
      expected: {
        outcome: 'unauthorized',
        actions: [
          { action: 'pause-uploads', reason: refusedReason },
          { action: 'update-entry', change: { state: 'queued', reason: refusedReason } },
        ],
        ending: { end: 'hand-back', reason: refusedReason, status: 401 },
      },
    },
    {
      name: 'a forbidden key (403) at the last attempt still pauses: no attempt is spent',
      facts: answer(response(403, 'no'), { attempt: 3 }),
      expected: {
        outcome: 'unauthorized',
        actions: [
          { action: 'pause-uploads', reason: 'the parsing service refused the API key (HTTP 403): no' },
          {
            action: 'update-entry',
            change: { state: 'queued', reason: 'the parsing service refused the API key (HTTP 403): no' },
          },
        ],
        ending: {
          end: 'hand-back',
          reason: 'the parsing service refused the API key (HTTP 403): no',
          status: 403,
        },
      },
    },
    {
      name: 'a refusal of a key a reload replaced meanwhile retries instead of pausing',
      facts: answer(response(401), { keyReplaced: true }),
      expected: {
        outcome: 'unauthorized',
        actions: [{ action: 'update-entry', change: { state: 'queued', reason: replaced, attempts: 1 } }],
        ending: { end: 'retry', reason: replaced, retryAfter: undefined },
      },
    },
    {
      name: 'a refusal of a replaced key at the last attempt gives up',
      facts: answer(response(401), { keyReplaced: true, attempt: 3 }),
      expected: {
        outcome: 'unauthorized',
        actions: [
          {
            action: 'update-entry',
            change: { state: 'failed', reason: `gave up after 3 attempts: ${replaced}`, attempts: 3 },
          },
        ],
        ending: { end: 'fail', reason: `gave up after 3 attempts: ${replaced}` },
      },
    },
  ])('$name', ({ facts, expected }) => {
    expect(settleAnswer(facts)).toEqual(expected);
  });
});

describe('retryLater and failure (steps that had no answer to classify)', () => {
  it('retries later, keeping the Retry-After', () => {
    expect(retryLater('document lookup answered HTTP 503', '120', 2)).toEqual({
      actions: [
        {
          action: 'update-entry',
          change: { state: 'queued', reason: 'document lookup answered HTTP 503', attempts: 2 },
        },
      ],
      ending: { end: 'retry', reason: 'document lookup answered HTTP 503', retryAfter: '120' },
    });
  });

  it('fails, recording the attempt', () => {
    expect(failure('the stored attachment is gone', 1)).toEqual({
      actions: [
        {
          action: 'update-entry',
          change: { state: 'failed', reason: 'the stored attachment is gone', attempts: 1 },
        },
      ],
      ending: { end: 'fail', reason: 'the stored attachment is gone' },
    });
  });
});

describe('finishSettled', () => {
  const base: SettledEntry = {
    entry: 0,
    part: 1,
    fileName: 'invoice.pdf',
    contentType: 'application/pdf',
    detectedType: 'application/pdf',
    size: 10,
    sha256: 'ab'.repeat(32),
    workspace: 'ws-1',
    state: 'uploaded',
    reason: null,
    documentIdentifier: 'DOC-1',
    attempts: 1,
    warnings: [],
    updatedAt: '2025-03-01T10:00:00.000Z',
  };
  const settled = (patch: Partial<SettledEntry>): SettledEntry => ({
    ...base,
    ...patch,
  });
  const indexAndRelease = [
    { action: 'index-document', documentIdentifier: 'DOC-1' },
    { action: 'release-blob' },
  ];
  const track = { action: 'track-completion', documentIdentifier: 'DOC-1', document: null };
  const polling = {
    state: 'polling' as const,
    polls: 0,
    nextPollAt: '2025-03-01T10:00:10.000Z',
    reason: null,
  };

  it.each<{ name: string; entry: SettledEntry; actions: unknown[] }>([
    {
      name: 'uploaded, tracking never started: index, release, track',
      entry: base,
      actions: [...indexAndRelease, track],
    },
    {
      name: 'uploaded, tracking marked polling by a run that died before adding its job: track again',
      entry: settled({ completion: polling }),
      actions: [...indexAndRelease, track],
    },
    {
      name: 'uploaded, tracking already finished: not again',
      entry: settled({ completion: { ...polling, state: 'ready', nextPollAt: null } }),
      actions: indexAndRelease,
    },
    {
      name: 'uploaded and already parsed (wait: true): nothing to track',
      entry: settled({ ready: true }),
      actions: indexAndRelease,
    },
    {
      name: 'rejected: never tracked',
      entry: settled({ state: 'rejected', reason: 'duplicate: of DOC-0' }),
      actions: indexAndRelease,
    },
  ])('$name', ({ entry, actions }) => {
    expect(finishSettled(entry)).toEqual({
      actions,
      ending: { end: 'done', documentIdentifier: 'DOC-1', state: entry.state, reason: entry.reason },
    });
  });
});
