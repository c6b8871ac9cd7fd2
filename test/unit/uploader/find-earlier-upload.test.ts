import { describe, expect, it } from 'vitest';
import type { ApiResult } from '../../../src/parsing-api/api-result.ts';
import { type EarlierUpload, findEarlierUpload } from '../../../src/uploader/find-earlier-upload.ts';

/** The upload looked up: customIdentifier `q-0` in workspace `ws-1`. */
const meta = (customIdentifier = 'q-0', workspace: unknown = { identifier: 'ws-1' }) => ({
  identifier: `doc-${customIdentifier}`,
  customIdentifier,
  workspace,
  fileName: 'invoice.pdf',
  ready: false,
});
const fullDocument = (customIdentifier?: string, workspace?: unknown) => ({
  extractor: 'invoice',
  meta: meta(customIdentifier, workspace),
  data: {},
});
const snakeMeta = {
  identifier: 'doc-q-0',
  custom_identifier: 'q-0',
  workspace: { identifier: 'ws-1' },
  ready_dt: null,
};
const ok = (body: unknown, headers: Record<string, string> = {}): ApiResult => ({
  kind: 'response',
  status: 200,
  headers,
  body,
});
const page = (results: unknown[], more: { count?: unknown; next?: unknown } = {}) =>
  ok({ count: results.length, next: null, previous: null, results, ...more });
const single = (last: ApiResult) => ({ followed: [], last });
const found = {
  found: expect.objectContaining({ meta: expect.objectContaining({ identifier: 'doc-q-0' }) }),
};
const unknown = (reason: string): EarlierUpload => ({ unknown: reason });

describe('findEarlierUpload: the document an earlier attempt created', () => {
  it.each<[string, { followed: ApiResult[]; last: ApiResult }]>([
    ['a full Document in a page', single(page([fullDocument()]))],
    ['a bare Meta in a page', single(page([meta()]))],
    ['a bare Meta in snake_case', single(page([snakeMeta]))],
    ['a full Document in snake_case', single(page([{ extractor: 'x', meta: snakeMeta, data: {} }]))],
    ['a bare array of Documents', single(ok([fullDocument()]))],
    ['a bare array of Metas', single(ok([meta()]))],
    ['a Meta whose workspace is its identifier string', single(page([meta('q-0', 'ws-1')]))],
    [
      'among documents of other identifiers and workspaces',
      single(page([meta('q-9'), meta('q-0', { identifier: 'ws-2' }), meta()])),
    ],
    [
      'listed after the children the service split off it, which carry its customIdentifier',
      single(
        page([
          {
            ...meta(),
            identifier: 'doc-q-0-page-1',
            parentDocument: { identifier: 'doc-q-0', customIdentifier: 'q-0' },
          },
          { ...meta(), childDocuments: [{ identifier: 'doc-q-0-page-1', customIdentifier: 'q-0' }] },
        ]),
      ),
    ],
    [
      'on the second page',
      { followed: [page([meta('q-9')], { count: 2, next: '?page=2' })], last: page([meta()], { count: 2 }) },
    ],
    [
      'beside an item it cannot read: a matching document is certain',
      single(page([{ nonsense: true }, meta()])),
    ],
    [
      'on a first page whose next page failed',
      {
        followed: [page([meta()], { count: 2, next: '?page=2' })],
        last: { kind: 'response', status: 502, headers: {}, body: 'bad gateway' },
      },
    ],
  ])('is found as %s', (_name, listing) => {
    expect(findEarlierUpload(listing, 'q-0', 'ws-1')).toEqual(found);
  });

  it('is handed back as a Document, a bare Meta wrapped as its meta', () => {
    expect(findEarlierUpload(single(page([meta()])), 'q-0', 'ws-1')).toEqual({
      found: {
        meta: {
          identifier: 'doc-q-0',
          customIdentifier: 'q-0',
          workspace: { identifier: 'ws-1' },
          fileName: 'invoice.pdf',
          ready: false,
        },
      },
    });
  });
});

describe('findEarlierUpload: nothing uploaded, read from a complete listing', () => {
  it.each<[string, { followed: ApiResult[]; last: ApiResult }]>([
    ['an empty page', single(page([]))],
    ['an empty bare array', single(ok([]))],
    ['a page without count or next', single(ok({ results: [] }))],
    ['another identifier only', single(page([meta('q-9')]))],
    [
      "another workspace's document of the same identifier",
      single(page([fullDocument('q-0', { identifier: 'ws-2' })])),
    ],
    [
      'only a child split off another upload, though it carries this customIdentifier',
      single(page([{ ...meta(), parentDocument: { identifier: 'doc-other', customIdentifier: 'q-0' } }])),
    ],
    [
      'two pages, neither with it',
      {
        followed: [page([meta('q-8')], { count: 2, next: '?page=2' })],
        last: page([meta('q-9')], { count: 2 }),
      },
    ],
  ])('in %s', (_name, listing) => {
    expect(findEarlierUpload(listing, 'q-0', 'ws-1')).toEqual({ found: null });
  });
});

describe('findEarlierUpload: no answer to rely on (retry the lookup, never upload blind)', () => {
  it.each<[string, { followed: ApiResult[]; last: ApiResult }, EarlierUpload]>([
    [
      'a network error',
      single({ kind: 'network', error: { code: 'ECONNRESET', message: 'socket hang up' } }),
      unknown('document lookup failed: socket hang up'),
    ],
    [
      'a 503',
      single({ kind: 'response', status: 503, headers: {}, body: undefined }),
      unknown('document lookup answered HTTP 503'),
    ],
    [
      'a 2xx that is not a list',
      single(ok({ detail: 'no' })),
      unknown('document lookup answered something other than a list'),
    ],
    ['a 2xx of text', single(ok('OK')), unknown('document lookup answered something other than a list')],
    [
      'a body too large to read',
      single({
        kind: 'response',
        status: 200,
        headers: {},
        body: undefined,
        bodyError: 'response body larger than 1048576 bytes',
      }),
      unknown('document lookup answered response body larger than 1048576 bytes'),
    ],
    [
      'a count that is not a number',
      single(page([], { count: 'many' })),
      unknown('document lookup answered a list whose count is "many"'),
    ],
    [
      'a next that is not a link',
      single(page([], { next: 2 })),
      unknown('document lookup answered a list whose next is 2'),
    ],
    [
      'an item that is neither a Document nor a Meta',
      single(page([{ id: 7, custom_identifier: 'q-0' }])),
      unknown('document lookup listed an item neither a Document nor a Meta (unreadable at identifier)'),
    ],
    [
      'an item that is not an object',
      single(page(['doc-q-0'])),
      unknown('document lookup listed an item that is not an object'),
    ],
    [
      'a Document whose meta has no identifier',
      single(page([{ meta: { customIdentifier: 'q-0' } }])),
      unknown('document lookup listed a Document unreadable at meta.identifier'),
    ],
    [
      'a document without its customIdentifier',
      single(page([{ identifier: 'doc-none', workspace: { identifier: 'ws-1' } }])),
      unknown('document lookup listed document doc-none without its customIdentifier'),
    ],
    [
      'a document of this identifier without its workspace',
      single(page([{ identifier: 'doc-q-0', customIdentifier: 'q-0', workspace: null }])),
      unknown('document lookup listed document doc-q-0 without its workspace'),
    ],
    [
      'a count larger than the items listed',
      single(page([meta('q-9')], { count: 3 })),
      unknown('document lookup counted 3 documents but listed 1'),
    ],
    [
      'a next page it did not read',
      single(page([meta('q-9')], { count: 2, next: 'https://api.example/v3/documents?page=2' })),
      unknown('document lookup read 1 pages and more remain'),
    ],
    [
      'a next page that failed',
      {
        followed: [page([meta('q-9')], { count: 2, next: '?page=2' })],
        last: { kind: 'response', status: 503, headers: {}, body: undefined },
      },
      unknown('document lookup answered HTTP 503'),
    ],
  ])('after %s', (_name, listing, expected) => {
    expect(findEarlierUpload(listing, 'q-0', 'ws-1')).toEqual(expected);
  });
});
