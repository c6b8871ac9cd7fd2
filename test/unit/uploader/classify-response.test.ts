import { toSnakeCase } from '@ingest-gateway/mock-parsing-api';
import { describe, expect, it } from 'vitest';
import type { ApiResult } from '../../../src/parsing-api/api-result.ts';
import {
  type Classification,
  classifyResponse,
  inspectResponse,
  summariseRequestError,
} from '../../../src/uploader/classify-response.ts';

const document = (extra: Record<string, unknown> = {}, meta: Record<string, unknown> = {}) => ({
  extractor: 'invoice',
  meta: { identifier: 'AbCd1234', fileName: 'invoice.pdf', ready: false, failed: false, ...meta },
  data: {},
  ...extra,
});

const response = (status: number, body?: unknown, headers: Record<string, string> = {}): ApiResult => ({
  kind: 'response',
  status,
  headers,
  body,
});

const network = (code: string | undefined, message: string): ApiResult =>
  code === undefined
    ? { kind: 'network', error: { message } }
    : { kind: 'network', error: { code, message } };

const fileInvalid = {
  type: 'validation_error',
  errors: [{ attr: 'file', code: 'invalid', detail: 'unsupported file type' }],
};
const notAuthenticated = {
  type: 'client_error',
  errors: [
    { attr: null, code: 'not_authenticated', detail: 'Authentication credentials were not provided.' },
  ],
};

describe('classifyResponse', () => {
  it.each<{ name: string; result: ApiResult; attempt?: number; expected: Classification }>([
    {
      name: '200 Document → uploaded',
      result: response(200, document({}, { ready: true, readyDt: '2025-01-01T00:00:00Z' })),
      expected: { outcome: 'uploaded', documentIdentifier: 'AbCd1234', warnings: [] },
    },
    {
      name: '201 pending Document (wait=false) → uploaded',
      result: response(201, document()),
      expected: { outcome: 'uploaded', documentIdentifier: 'AbCd1234', warnings: [] },
    },
    {
      name: '2xx with null error and unknown fields → uploaded',
      result: response(200, document({ error: null, warnings: null, novelty: 1 }, { somethingNew: true })),
      expected: { outcome: 'uploaded', documentIdentifier: 'AbCd1234', warnings: [] },
    },
    {
      name: '2xx with warnings → uploaded with the warnings',
      result: response(
        200,
        document({ warnings: [{ warningCode: 'too_many_pages', warningDetail: 'first 10' }] }),
      ),
      expected: {
        outcome: 'uploaded',
        documentIdentifier: 'AbCd1234',
        warnings: [{ warningCode: 'too_many_pages', warningDetail: 'first 10' }],
      },
    },
    {
      name: '2xx with error → rejected, not retried',
      result: response(
        200,
        document(
          { error: { errorCode: 'document_conversion_failed', errorDetail: 'could not convert' } },
          { failed: true, errorCode: 'document_conversion_failed', errorDetail: 'could not convert' },
        ),
      ),
      expected: {
        outcome: 'rejected',
        documentIdentifier: 'AbCd1234',
        errorCode: 'document_conversion_failed',
        errorDetail: 'could not convert',
        warnings: [],
      },
    },
    {
      name: '2xx rejected duplicate with warnings keeps both',
      result: response(
        201,
        document({
          error: { errorCode: 'duplicate_document', errorDetail: 'duplicate of X' },
          warnings: [{ warningCode: 'too_many_pages', warningDetail: 'first 10' }],
        }),
      ),
      expected: {
        outcome: 'rejected',
        documentIdentifier: 'AbCd1234',
        errorCode: 'duplicate_document',
        errorDetail: 'duplicate of X',
        warnings: [{ warningCode: 'too_many_pages', warningDetail: 'first 10' }],
      },
    },
    {
      name: '2xx with only meta.failed and meta.errorCode → rejected',
      result: response(
        200,
        document({}, { failed: true, errorCode: 'invalid_document_type', errorDetail: 'no' }),
      ),
      expected: {
        outcome: 'rejected',
        documentIdentifier: 'AbCd1234',
        errorCode: 'invalid_document_type',
        errorDetail: 'no',
        warnings: [],
      },
    },
    {
      name: '408 → retry',
      result: response(408),
      expected: { outcome: 'retry', reason: 'HTTP 408 Request Timeout' },
    },
    {
      name: '429 with Retry-After seconds → retry carrying it',
      result: response(429, undefined, { 'retry-after': '30' }),
      expected: { outcome: 'retry', reason: 'HTTP 429 Too Many Requests', retryAfter: '30' },
    },
    {
      name: '429 with Retry-After as an HTTP date → retry carrying it',
      result: response(429, undefined, { 'retry-after': 'Wed, 01 Jan 2025 00:02:00 GMT' }),
      expected: {
        outcome: 'retry',
        reason: 'HTTP 429 Too Many Requests',
        retryAfter: 'Wed, 01 Jan 2025 00:02:00 GMT',
      },
    },
    {
      name: '500 with a RequestError → retry naming it',
      result: response(500, {
        type: 'server_error',
        errors: [{ attr: null, code: 'error', detail: 'boom' }],
      }),
      expected: { outcome: 'retry', reason: 'HTTP 500 Internal Server Error: error: boom' },
    },
    {
      name: '502 with a proxy page → retry quoting it',
      result: response(502, '<html>\n  Bad   gateway\n</html>'),
      expected: { outcome: 'retry', reason: 'HTTP 502 Bad Gateway: <html> Bad gateway </html>' },
    },
    {
      name: '503 with Retry-After → retry',
      result: response(503, undefined, { 'retry-after': '5' }),
      expected: { outcome: 'retry', reason: 'HTTP 503 Service Unavailable', retryAfter: '5' },
    },
    {
      name: 'network ECONNRESET → retry',
      result: network('ECONNRESET', 'other side closed'),
      expected: { outcome: 'retry', reason: 'network error ECONNRESET: other side closed' },
    },
    {
      name: 'network error without a code → retry',
      result: network(undefined, 'socket hang up'),
      expected: { outcome: 'retry', reason: 'network error without code: socket hang up' },
    },
    {
      name: 'timeout → retry',
      result: network('TIMEOUT', 'no complete response within 30000 ms'),
      expected: { outcome: 'retry', reason: 'timed out: no complete response within 30000 ms' },
    },
    {
      name: '400 with a RequestError → failed with its detail',
      result: response(400, fileInvalid),
      expected: {
        outcome: 'failed',
        reason: 'HTTP 400 Bad Request',
        detail: 'file: invalid: unsupported file type',
        requestError: fileInvalid,
      },
    },
    {
      name: '401 → unauthorized',
      result: response(401, notAuthenticated),
      expected: {
        outcome: 'unauthorized',
        status: 401,
        detail: 'not_authenticated: Authentication credentials were not provided.',
      },
    },
    {
      name: '401 on the last attempt is still unauthorized',
      result: response(401),
      attempt: 5,
      expected: { outcome: 'unauthorized', status: 401, detail: 'HTTP 401 Unauthorized' },
    },
    {
      name: '403 → unauthorized',
      result: response(403, {
        type: 'client_error',
        errors: [{ attr: null, code: 'permission_denied', detail: 'no' }],
      }),
      expected: { outcome: 'unauthorized', status: 403, detail: 'permission_denied: no' },
    },
    {
      name: '404 without a body → failed',
      result: response(404),
      expected: { outcome: 'failed', reason: 'HTTP 404 Not Found', detail: 'HTTP 404 Not Found' },
    },
    {
      name: '413 → failed, not retried',
      result: response(413, {
        type: 'client_error',
        errors: [{ attr: 'file', code: 'file_too_large', detail: 'over 20 MB' }],
      }),
      expected: {
        outcome: 'failed',
        reason: 'HTTP 413 Payload Too Large',
        detail: 'file: file_too_large: over 20 MB',
        requestError: {
          type: 'client_error',
          errors: [{ attr: 'file', code: 'file_too_large', detail: 'over 20 MB' }],
        },
      },
    },
    {
      name: '3xx (never followed) → failed',
      result: response(302),
      expected: { outcome: 'failed', reason: 'HTTP 302 Found', detail: 'HTTP 302 Found' },
    },
  ])('$name', ({ result, attempt, expected }) => {
    expect(classifyResponse({ result, attempt: attempt ?? 1, maxAttempts: 5 })).toEqual(expected);
  });

  it.each<{ name: string; result: ApiResult; reason: string; detail: string }>([
    {
      name: '503',
      result: response(503),
      reason: 'gave up after 5 attempts: HTTP 503 Service Unavailable',
      detail: 'HTTP 503 Service Unavailable',
    },
    {
      name: '429',
      result: response(429, undefined, { 'retry-after': '30' }),
      reason: 'gave up after 5 attempts: HTTP 429 Too Many Requests',
      detail: 'HTTP 429 Too Many Requests',
    },
    {
      name: 'ECONNRESET',
      result: network('ECONNRESET', 'reset'),
      reason: 'gave up after 5 attempts: network error ECONNRESET: reset',
      detail: 'network error ECONNRESET: reset',
    },
    {
      name: 'timeout',
      result: network('TIMEOUT', 'slow'),
      reason: 'gave up after 5 attempts: timed out: slow',
      detail: 'timed out: slow',
    },
  ])('the last attempt ending in $name → failed', ({ result, reason, detail }) => {
    expect(classifyResponse({ result, attempt: 5, maxAttempts: 5 })).toEqual({
      outcome: 'failed',
      reason,
      detail,
    });
  });

  it('keeps the RequestError of a 5xx that exhausted the attempts', () => {
    const body = { type: 'server_error', errors: [{ attr: null, code: 'error', detail: 'boom' }] };
    expect(classifyResponse({ result: response(500, body), attempt: 3, maxAttempts: 3 })).toEqual({
      outcome: 'failed',
      reason: 'gave up after 3 attempts: HTTP 500 Internal Server Error: error: boom',
      detail: 'error: boom',
      requestError: body,
    });
  });

  it.each<{ name: string; result: ApiResult; detail: RegExp }>([
    { name: 'no body', result: response(200), detail: /body/ },
    {
      name: 'a body without meta',
      result: response(200, { extractor: 'invoice', data: {} }),
      detail: /meta/,
    },
    {
      name: 'meta without identifier',
      result: response(201, { extractor: 'invoice', meta: { fileName: 'a.pdf' } }),
      detail: /meta\.identifier/,
    },
    { name: 'a text body', result: response(200, 'OK'), detail: /body/ },
    {
      name: 'an unreadable body',
      result: { kind: 'response', status: 200, headers: {}, body: undefined, bodyError: 'invalid JSON: x' },
      detail: /invalid JSON/,
    },
  ])('2xx with $name → failed, never retried', ({ result, detail }) => {
    const verdict = classifyResponse({ result, attempt: 1, maxAttempts: 5 });
    expect(verdict.outcome).toBe('failed');
    if (verdict.outcome !== 'failed') return;
    expect(verdict.reason).toMatch(/^HTTP 20[01] .*not retried/);
    expect(verdict.detail).toMatch(detail);
  });

  it('truncates a long detail', () => {
    const verdict = classifyResponse({
      result: response(400, 'x'.repeat(10_000)),
      attempt: 1,
      maxAttempts: 5,
    });
    expect(verdict.outcome === 'failed' && verdict.detail.length).toBe(500);
  });
});

describe('summariseRequestError', () => {
  it.each([
    { error: fileInvalid, expected: 'file: invalid: unsupported file type' },
    {
      error: {
        type: 'validation_error',
        errors: [
          { attr: 'wait', code: 'invalid', detail: 'Must be a valid boolean.' },
          { attr: null, code: 'invalid', detail: 'Either file or url.' },
        ],
      },
      expected: 'wait: invalid: Must be a valid boolean.; invalid: Either file or url.',
    },
    { error: { type: 'server_error', errors: [] }, expected: 'server_error' },
  ])('$expected', ({ error, expected }) => {
    expect(summariseRequestError(error)).toBe(expected);
  });
});

describe('snake_case answers (?snake_case=true)', () => {
  it.each<{ name: string; body: Record<string, unknown>; expected: Classification }>([
    {
      name: 'a pending Document',
      body: document({}, { ready: false, readyDt: null, customIdentifier: 'c' }),
      expected: { outcome: 'uploaded', documentIdentifier: 'AbCd1234', warnings: [] },
    },
    {
      name: 'a Document with warnings',
      body: document({ warnings: [{ warningCode: 'too_many_pages', warningDetail: 'first 10' }] }),
      expected: {
        outcome: 'uploaded',
        documentIdentifier: 'AbCd1234',
        warnings: [{ warningCode: 'too_many_pages', warningDetail: 'first 10' }],
      },
    },
    {
      name: 'a rejected Document, error only in meta',
      body: document({}, { failed: true, errorCode: 'invalid_document_type', errorDetail: 'no' }),
      expected: {
        outcome: 'rejected',
        documentIdentifier: 'AbCd1234',
        errorCode: 'invalid_document_type',
        errorDetail: 'no',
        warnings: [],
      },
    },
  ])('$name is classified as in camelCase', ({ body, expected }) => {
    const snake = toSnakeCase(body);
    expect(classifyResponse({ result: response(201, snake), attempt: 1, maxAttempts: 5 })).toEqual(expected);
    expect(classifyResponse({ result: response(201, body), attempt: 1, maxAttempts: 5 })).toEqual(expected);
  });
});

describe('inspectResponse', () => {
  it('hands back the validated Document of a 2xx, in camelCase whatever the answer', () => {
    const body = toSnakeCase(document({}, { ready: true, readyDt: '2025-01-01T00:00:00Z' }));
    const { verdict, document: parsed } = inspectResponse({
      result: response(200, body),
      attempt: 1,
      maxAttempts: 5,
    });
    expect(verdict.outcome).toBe('uploaded');
    expect(parsed?.meta).toMatchObject({
      identifier: 'AbCd1234',
      ready: true,
      readyDt: '2025-01-01T00:00:00Z',
    });
  });

  it.each<{ name: string; result: ApiResult }>([
    { name: 'a 400', result: response(400, fileInvalid) },
    { name: 'a 2xx that is not a Document', result: response(200, { hello: 1 }) },
    { name: 'a network error', result: network('ECONNRESET', 'reset') },
  ])('has no Document for $name', ({ result }) => {
    expect(inspectResponse({ result, attempt: 1, maxAttempts: 5 }).document).toBeNull();
  });

  it('gives the same verdict as classifyResponse', () => {
    const result = response(400, fileInvalid);
    expect(inspectResponse({ result, attempt: 1, maxAttempts: 5 }).verdict).toEqual(
      classifyResponse({ result, attempt: 1, maxAttempts: 5 }),
    );
  });
});
