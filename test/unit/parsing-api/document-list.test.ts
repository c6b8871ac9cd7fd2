import { describe, expect, it } from 'vitest';
import type { ApiResult } from '../../../src/parsing-api/api-result.ts';
import type { ApiRequest } from '../../../src/parsing-api/api-transport.ts';
import { nextPageRequest, readListItem } from '../../../src/parsing-api/document-list.ts';

const first: ApiRequest = {
  method: 'GET',
  path: '/v3/documents',
  query: { custom_identifier: 'q-1' },
  snakeCase: true,
};
const pageWith = (next: unknown, status = 200): ApiResult => ({
  kind: 'response',
  status,
  headers: {},
  body: { count: 9, next, results: [] },
});

describe('nextPageRequest', () => {
  it.each<[string, string, ApiResult, Partial<ApiRequest> | undefined]>([
    [
      'an absolute link on the same origin',
      'https://api.example',
      pageWith('https://api.example/v3/documents?custom_identifier=q-1&page=2'),
      { path: '/v3/documents', query: { custom_identifier: 'q-1', page: '2' }, snakeCase: true },
    ],
    [
      'a link relative to the page',
      'https://api.example',
      pageWith('?custom_identifier=q-1&cursor=abc'),
      { path: '/v3/documents', query: { custom_identifier: 'q-1', cursor: 'abc' } },
    ],
    [
      'a link under the base URL path',
      'https://gw.example/parser',
      pageWith('https://gw.example/parser/v3/documents?page=3'),
      { path: '/v3/documents', query: { page: '3' } },
    ],
    [
      'a link to another origin',
      'https://api.example',
      pageWith('https://evil.example/v3/documents?page=2'),
      undefined,
    ],
    [
      'a link to another scheme',
      'https://api.example',
      pageWith('http://api.example/v3/documents?page=2'),
      undefined,
    ],
    [
      'a link outside the base URL path',
      'https://gw.example/parser',
      pageWith('https://gw.example/v3/documents?page=2'),
      undefined,
    ],
    ['no next page', 'https://api.example', pageWith(null), undefined],
    ['a failed answer', 'https://api.example', pageWith('?page=2', 503), undefined],
    ['a next that is not a link', 'https://api.example', pageWith(2), undefined],
  ])('%s', (_name, baseUrl, answer, expected) => {
    const request = nextPageRequest(answer, baseUrl, first);
    if (expected === undefined) expect(request).toBeUndefined();
    else expect(request).toMatchObject({ method: 'GET', ...expected });
  });
});

describe('readListItem', () => {
  it.each<[string, unknown, string | null]>([
    ['a camelCase Document', { meta: { identifier: 'd', customIdentifier: 'q' }, data: {} }, 'q'],
    ['a snake_case Document', { meta: { identifier: 'd', custom_identifier: 'q' } }, 'q'],
    ['a camelCase Meta', { identifier: 'd', customIdentifier: 'q', readyDt: null }, 'q'],
    ['a snake_case Meta', { identifier: 'd', custom_identifier: 'q', ready_dt: null }, 'q'],
    ['a Meta with null fields', { identifier: 'd', customIdentifier: null, workspace: null }, null],
  ])('reads %s', (_name, item, customIdentifier) => {
    expect(readListItem(item)).toEqual({
      document: expect.objectContaining({
        meta: expect.objectContaining({ identifier: 'd', customIdentifier }),
      }),
    });
  });

  it.each<[string, unknown]>([
    ['null', null],
    ['a number', 7],
    ['a Meta without identifier', { customIdentifier: 'q' }],
    ['a Document whose meta has a numeric identifier', { meta: { identifier: 12 } }],
    ['a Meta whose workspace is a number', { identifier: 'd', workspace: 3 }],
  ])('reports %s as unreadable', (_name, item) => {
    expect(readListItem(item)).toEqual({ unreadable: expect.any(String) });
  });
});
