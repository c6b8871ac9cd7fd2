import type { IncomingMessage, ServerResponse } from 'node:http';
import * as z from 'zod';
import { changeDocumentListSettings, documentListChangeSchema } from './document-list-settings.ts';
import { documentTypeSeedSchema } from './document-type-store.ts';
import { mockFaultSchema } from './faults.ts';
import type { MockContext } from './mock-context.ts';
import { changeOrganizationListSettings, organizationListChangeSchema } from './organization-lists.ts';
import { readText } from './read-body.ts';
import { publicView } from './received-uploads.ts';
import { clientError, notFound, validationError } from './request-error.ts';
import { respond } from './respond.ts';
import { workspaceSeedSchema } from './workspace-seed.ts';

/**
 * The mock's test-control surface, for tests and tools in another process than the mock:
 * - `POST /_mock/faults` with a JSON fault (faults.ts: `{"status": 503}`,
 *   `{"status": 429, "retryAfter": 2}`, `{"drop": "before"}`, `{"drop": "after"}`,
 *   `{"hang": true}`, `{"latencyMs": 200}`, `{"commitDelayMs": 2500}`, with `"times": 3` or
 *   `"times": "always"`, and `"method"`/`"path"` to aim at another /v3 route than the upload)
 *   queues it → 204;
 *   `GET` lists the queue, `DELETE` empties it (`"always"` entries included) → 204;
 * - `GET /_mock/uploads` → `{uploads: [...]}`, the received uploads without bytes or key;
 * - `GET /_mock/credits` → `{used}`, the credits documents have cost (credit-meter.ts);
 * - `GET /_mock/hooks` → `{subscriptions, deliveries}`, every resthook delivery with its
 *   attempts;
 * - `GET /_mock/organization` → the mock's organization with its `resthookSignatureKey`,
 *   so a receiver in another process can check signatures;
 * - `GET /_mock/settings` → `{documentList: {items, pageSize}}`, how the document list
 *   answers (document-list-settings.ts); `PATCH` with `{"documentList": {"items": "meta"}}`
 *   changes the settings given → 200 with all of them.
 * - `POST /_mock/workspaces` with a workspace seed (workspace-seed.ts) creates a workspace →
 *   201 with it (409 when the identifier is taken); `DELETE /_mock/workspaces/{identifier}`
 *   deletes it → 204 (404 when unknown); `POST /_mock/workspaces/{identifier}/rotate` with
 *   `{}` or `{"ingestEmail": …}` gives it a new ingest address → 200 with it;
 * - the same under `/_mock/document_types` for document types (document-type-store.ts);
 * - `PATCH /_mock/settings` with `{"organizationLists": {"shape": "bare", "pageSize": 2}}`
 *   changes how the workspace and document type lists answer (organization-lists.ts).
 * It has no authentication on purpose: it is a test fixture, not part of the API, and the
 * mock is meant to listen on loopback. Nothing here exists on the real service, and faults
 * never apply here.
 */

/** Largest fault body in bytes; a fault is a status, a few headers and a small body. */
const MAX_CONTROL_BODY_BYTES = 64 * 1024;

export async function handleControl(
  context: MockContext,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): Promise<void> {
  const method = req.method ?? '';
  switch (path) {
    case '/_mock/uploads':
      if (method !== 'GET') return methodNotAllowed(res, method, 'GET');
      return respond(res, 200, { uploads: context.uploads.uploads.map(publicView) });
    case '/_mock/credits':
      if (method !== 'GET') return methodNotAllowed(res, method, 'GET');
      return respond(res, 200, { used: context.credits.used });
    case '/_mock/hooks':
      if (method !== 'GET') return methodNotAllowed(res, method, 'GET');
      return respond(res, 200, {
        subscriptions: context.resthooks.subscriptions.list(),
        deliveries: context.resthooks.dispatcher.deliveries,
      });
    case '/_mock/organization':
      if (method !== 'GET') return methodNotAllowed(res, method, 'GET');
      return respond(res, 200, context.organization);
    case '/_mock/settings':
      if (method === 'GET') return respond(res, 200, currentSettings(context));
      if (method === 'PATCH') return changeSettings(context, req, res);
      return methodNotAllowed(res, method, 'GET, PATCH');
    case '/_mock/faults':
      if (method === 'GET') return respond(res, 200, { faults: context.faults.list() });
      if (method === 'DELETE') {
        context.faults.clear();
        res.writeHead(204).end();
        return;
      }
      if (method === 'POST') return enqueueFault(context, req, res);
      return methodNotAllowed(res, method, 'GET, POST, DELETE');
    default:
      return handleCatalogue(context, req, res, path);
  }
}

const CATALOGUE_PATH = /^\/_mock\/(workspaces|document_types)(?:\/([^/]+)(\/rotate)?)?\/?$/;

const rotateSchema = z.strictObject({ ingestEmail: z.string().min(1).optional() });

/** `/_mock/workspaces…` and `/_mock/document_types…`: create, delete and rotate at run time. */
async function handleCatalogue(
  context: MockContext,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): Promise<void> {
  const match = CATALOGUE_PATH.exec(path);
  if (match === null) return respond(res, 404, notFound());
  const kind = match[1];
  const store = kind === 'workspaces' ? context.workspaces : context.documentTypes;
  const segment = match[2];
  const method = req.method ?? '';
  if (segment === undefined) {
    if (method !== 'POST') return methodNotAllowed(res, method, 'POST');
    const json = await readJson(req, res);
    if (json === undefined) return;
    try {
      const added =
        kind === 'workspaces'
          ? context.workspaces.add(workspaceSeedSchema.parse(json.value))
          : context.documentTypes.add(documentTypeSeedSchema.parse(json.value));
      return respond(res, 201, added);
    } catch (caught) {
      if (caught instanceof z.ZodError) {
        return respond(res, 400, validationError(null, 'invalid', describeIssues(caught)));
      }
      const detail = caught instanceof Error ? caught.message : String(caught);
      return respond(res, 409, clientError('conflict', detail));
    }
  }
  let identifier: string;
  try {
    identifier = decodeURIComponent(segment);
  } catch {
    return respond(res, 404, notFound());
  }
  if (match[3] === undefined) {
    if (method !== 'DELETE') return methodNotAllowed(res, method, 'DELETE');
    if (!store.remove(identifier)) return respond(res, 404, notFound());
    res.writeHead(204).end();
    return;
  }
  if (method !== 'POST') return methodNotAllowed(res, method, 'POST');
  const json = await readJson(req, res);
  if (json === undefined) return;
  const parsed = rotateSchema.safeParse(json.value);
  if (!parsed.success)
    return respond(res, 400, validationError(null, 'invalid', describeIssues(parsed.error)));
  const rotated = store.rotate(identifier, parsed.data.ingestEmail);
  if (rotated === undefined) return respond(res, 404, notFound());
  respond(res, 200, rotated);
}

async function enqueueFault(context: MockContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const json = await readJson(req, res);
  if (json === undefined) return;
  const parsed = mockFaultSchema.safeParse(json.value);
  if (!parsed.success)
    return respond(res, 400, validationError(null, 'invalid', describeIssues(parsed.error)));
  context.faults.enqueue(parsed.data);
  res.writeHead(204).end();
}

async function changeSettings(
  context: MockContext,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const json = await readJson(req, res);
  if (json === undefined) return;
  const parsed = settingsChangeSchema.safeParse(json.value);
  const next = parsed.success ? documentListChangeSchema.safeParse(parsed.data.documentList ?? {}) : parsed;
  if (!next.success) return respond(res, 400, validationError(null, 'invalid', describeIssues(next.error)));
  const lists = parsed.success
    ? organizationListChangeSchema.safeParse(parsed.data.organizationLists ?? {})
    : parsed;
  if (!lists.success) return respond(res, 400, validationError(null, 'invalid', describeIssues(lists.error)));
  context.documentList = changeDocumentListSettings(context.documentList, next.data);
  context.organizationLists = changeOrganizationListSettings(context.organizationLists, lists.data);
  respond(res, 200, currentSettings(context));
}

function currentSettings(context: MockContext) {
  return { documentList: context.documentList, organizationLists: context.organizationLists };
}

const settingsChangeSchema = z.strictObject({
  documentList: z.unknown().optional(),
  organizationLists: z.unknown().optional(),
});

/** The request's JSON, wrapped so that `null` is a value; undefined once an error was answered. */
async function readJson(req: IncomingMessage, res: ServerResponse): Promise<{ value: unknown } | undefined> {
  const text = await readText(req, MAX_CONTROL_BODY_BYTES);
  if (text === undefined) {
    respond(res, 413, clientError('too_large', `Body over ${MAX_CONTROL_BODY_BYTES} bytes.`));
    return undefined;
  }
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    respond(res, 400, clientError('parse_error', 'JSON parse error.'));
    return undefined;
  }
}

function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => (issue.path.length ? `${issue.path.join('.')}: ${issue.message}` : issue.message))
    .join('; ');
}

function methodNotAllowed(res: ServerResponse, method: string, allow: string): void {
  respond(res, 405, clientError('method_not_allowed', `Method "${method}" not allowed.`), {
    headers: { allow },
  });
}
