import type { IncomingMessage, ServerResponse } from 'node:http';
import { authenticate } from './authenticate.ts';
import type { DocumentFilter } from './document-store.ts';
import type { MockContext } from './mock-context.ts';
import { clientError, notFound, validationError } from './request-error.ts';
import { respond } from './respond.ts';

/**
 * The reads a poller uses (README.md, "Reading documents"):
 * - `GET /v3/documents/{identifier}` → 200 Document, or 404 RequestError;
 * - `GET /v3/documents?custom_identifier=…&ready=…&failed=…&page=N` → 200
 *   `{count, next, previous, results: [Document…]}`, the Django REST framework page shape;
 *   by default every match on one page of full Documents, else as the list settings say
 *   (document-list-settings.ts): bare Metas, pages of `pageSize` with absolute `next` and
 *   `previous` links, and 404 for a page past the last (as DRF's PageNumberPagination).
 */
export function handleGetDocument(
  context: MockContext,
  req: IncomingMessage,
  res: ServerResponse,
  identifier: string,
  snakeCase: boolean,
): void {
  const denied = authenticate(req.headers.authorization, context.apiKey);
  const document = context.store.documents.get(identifier);
  if (denied) respond(res, 401, denied);
  else if (document) respond(res, 200, document, { snakeCase });
  else respond(res, 404, notFound());
}

export function handleListDocuments(
  context: MockContext,
  req: IncomingMessage,
  res: ServerResponse,
  query: URLSearchParams,
  snakeCase: boolean,
): void {
  const denied = authenticate(req.headers.authorization, context.apiKey);
  if (denied) {
    respond(res, 401, denied);
    return;
  }
  const filter: DocumentFilter = {};
  const customIdentifier = query.get('custom_identifier');
  if (customIdentifier !== null) filter.customIdentifier = customIdentifier;
  for (const name of ['ready', 'failed'] as const) {
    const raw = query.get(name);
    if (raw === null) continue;
    if (raw !== 'true' && raw !== 'false') {
      respond(res, 400, validationError(name, 'invalid', 'Must be a valid boolean.'));
      return;
    }
    filter[name] = raw === 'true';
  }
  const matches = context.store.list(filter);
  const { items, pageSize } = context.documentList;
  const size = pageSize ?? Math.max(1, matches.length);
  const pages = Math.max(1, Math.ceil(matches.length / size));
  const page = pageNumber(query.get('page'));
  if (page === undefined || page > pages) {
    respond(res, 404, clientError('not_found', 'Invalid page.'));
    return;
  }
  const results = matches.slice((page - 1) * size, page * size);
  const link = (to: number) => (to < 1 || to > pages ? null : pageLink(req, query, to));
  respond(
    res,
    200,
    {
      count: matches.length,
      next: link(page + 1),
      previous: link(page - 1),
      results: items === 'meta' ? results.map((document) => document.meta) : results,
    },
    { snakeCase },
  );
}

function pageNumber(raw: string | null): number | undefined {
  if (raw === null) return 1;
  return /^[1-9]\d{0,5}$/.test(raw) ? Number(raw) : undefined;
}

/** An absolute link to another page of the same query, as DRF writes it (from the Host header). */
function pageLink(req: IncomingMessage, query: URLSearchParams, page: number): string {
  const search = new URLSearchParams(query);
  if (page === 1) search.delete('page');
  else search.set('page', String(page));
  const path = `/v3/documents${search.size > 0 ? `?${search}` : ''}`;
  return req.headers.host ? `http://${req.headers.host}${path}` : path;
}
