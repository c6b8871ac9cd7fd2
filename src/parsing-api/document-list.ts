import type { ApiResult } from './api-result.ts';
import type { ApiRequest, ApiTransport } from './api-transport.ts';
import { camelizeKeys, type Document, documentMetaSchema, documentSchema } from './document-schema.ts';

/**
 * `GET /v3/documents?custom_identifier=…` (docs/parsing-api.md, "Finding an earlier upload"),
 * read without guessing.
 * The spec fixes neither the page nor the item shape, so the reading takes what the service
 * plausibly sends and reports everything else instead of dropping it:
 * - a page is the Django REST framework envelope `{count, next, previous, results}` or,
 *   tolerated, a bare array; `next` is followed page by page (listDocuments);
 * - an item is a full Document (`{meta, data, …}`) or a bare Meta (`{identifier,
 *   customIdentifier, workspace, …}`), camelCase or snake_case; `workspace` as an object or,
 *   as the service writes it in a Tag, as the identifier string.
 * Dropping an item it cannot read would turn "could not read the answer" into "there is no
 * such document", and a worker that believes the latter uploads the attachment again.
 */

/** The answers of one listing, in the order they were fetched. */
export interface DocumentListing {
  /** 2xx pages whose `next` page was fetched after them. */
  followed: readonly ApiResult[];
  /** The answer the listing ended with: a page without `next`, the page at the bound, or a failure. */
  last: ApiResult;
}

/** One item of a page: a Document (a bare Meta becomes `{meta}`), or why it could not be read. */
export type ListedItem = { document: Document } | { unreadable: string };

export type ListPage =
  | {
      readable: true;
      items: ListedItem[];
      /** The total the service counted over all pages; null when it gave none. */
      count: number | null;
      /** The next page's URL (absolute or relative to this one); null on the last page. */
      next: string | null;
    }
  | { readable: false; reason: string };

/**
 * Most pages one listing fetches. A customIdentifier the gateway chose names one upload, so
 * even a service with one document per page answers in one or two; five leaves room for a
 * few documents of a user's template and bounds a service whose `next` never ends.
 */
export const MAX_LIST_PAGES = 5;

/** The body of a 2xx answer to the list call, read as far as it can be. */
export function readListPage(body: unknown): ListPage {
  if (Array.isArray(body)) return { readable: true, items: body.map(readListItem), count: null, next: null };
  if (!isPlainObject(body) || !Array.isArray(body.results)) {
    return { readable: false, reason: 'something other than a list' };
  }
  const { count, next } = body;
  if (count !== undefined && count !== null && !(Number.isInteger(count) && Number(count) >= 0)) {
    return { readable: false, reason: `a list whose count is ${JSON.stringify(count)}` };
  }
  if (next !== undefined && next !== null && typeof next !== 'string') {
    return { readable: false, reason: `a list whose next is ${JSON.stringify(next)}` };
  }
  return {
    readable: true,
    items: body.results.map(readListItem),
    count: typeof count === 'number' ? count : null,
    next: next === '' || next === undefined ? null : next,
  };
}

export function readListItem(item: unknown): ListedItem {
  if (!isPlainObject(item)) return { unreadable: 'an item that is not an object' };
  if (isPlainObject(item.meta)) {
    const parsed = documentSchema.safeParse({ ...item, meta: withWorkspaceObject(item.meta) });
    return parsed.success
      ? { document: parsed.data }
      : { unreadable: `a Document unreadable at ${unreadableAt(parsed)}` };
  }
  const parsed = documentMetaSchema.safeParse(withWorkspaceObject(camelizeKeys(item)));
  return parsed.success
    ? { document: { meta: parsed.data } }
    : { unreadable: `an item neither a Document nor a Meta (unreadable at ${unreadableAt(parsed)})` };
}

/**
 * Fetches the listing, following `next` through the same transport (so the same key, pool and
 * deadline) for at most `maxPages` pages. A `next` to another origin, or outside the base URL's
 * path, is not followed: the key goes nowhere but the configured service. The listing then ends
 * with that page, whose `next` tells the reader it did not see everything.
 */
export async function listDocuments(
  transport: ApiTransport,
  first: ApiRequest,
  maxPages = MAX_LIST_PAGES,
): Promise<DocumentListing> {
  const followed: ApiResult[] = [];
  let request = first;
  for (;;) {
    const answer = await transport.request(request);
    const next =
      followed.length + 1 < maxPages ? nextPageRequest(answer, transport.baseUrl, request) : undefined;
    if (next === undefined) return { followed, last: answer };
    followed.push(answer);
    request = next;
  }
}

/** The request for the page an answer names as `next`, when it is one to follow. */
export function nextPageRequest(
  answer: ApiResult,
  baseUrl: string,
  current: ApiRequest,
): ApiRequest | undefined {
  if (answer.kind !== 'response' || answer.status < 200 || answer.status >= 300) return undefined;
  const page = readListPage(answer.body);
  if (!page.readable || page.next === null) return undefined;
  return linkedPageRequest(page.next, baseUrl, current);
}

/**
 * The request for the page `link` names (absolute, or relative to the current page's URL),
 * or undefined when it points to another origin or outside the base URL's path: the key goes
 * nowhere but the configured service.
 */
export function linkedPageRequest(
  link: string,
  baseUrl: string,
  current: ApiRequest,
): ApiRequest | undefined {
  const base = new URL(baseUrl);
  const pathPrefix = base.pathname.replace(/\/+$/, '');
  const here = new URL(`${base.origin}${pathPrefix}${current.path}?${new URLSearchParams(current.query)}`);
  const next = URL.parse(link, here.href);
  if (next === null || next.origin !== base.origin || !next.pathname.startsWith(`${pathPrefix}/`))
    return undefined;
  return {
    method: 'GET',
    path: next.pathname.slice(pathPrefix.length),
    query: Object.fromEntries(next.searchParams),
    snakeCase: current.snakeCase,
  };
}

/** `workspace: "ws-1"` read as `{identifier: "ws-1"}`, the shape a Document's meta has. */
function withWorkspaceObject(meta: unknown): unknown {
  if (!isPlainObject(meta) || typeof meta.workspace !== 'string') return meta;
  return { ...meta, workspace: { identifier: meta.workspace } };
}

function unreadableAt(result: {
  error?: { issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey> }> };
}): string {
  const paths = (result.error?.issues ?? []).map((issue) => issue.path.map(String).join('.') || 'shape');
  return [...new Set(paths)].slice(0, 3).join(', ') || 'a readable shape';
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
