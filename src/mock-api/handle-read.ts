import type { IncomingMessage, ServerResponse } from 'node:http';
import { authenticate } from './authenticate.ts';
import type { DocumentFilter } from './document-store.ts';
import type { MockContext } from './mock-context.ts';
import { notFound, validationError } from './request-error.ts';
import { respond } from './respond.ts';

/**
 * The read side the facts file describes for polling:
 * - `GET /v3/documents/{identifier}` → 200 Document, or 404 RequestError;
 * - `GET /v3/documents?custom_identifier=…&ready=…&failed=…` → 200
 *   `{count, next: null, previous: null, results: [Document…]}`, the Django REST framework
 *   page shape, all matches on one page (the mock never paginates).
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
  const results = context.store.list(filter);
  respond(res, 200, { count: results.length, next: null, previous: null, results }, { snakeCase });
}
