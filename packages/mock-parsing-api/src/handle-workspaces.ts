import type { IncomingMessage, ServerResponse } from 'node:http';
import { authenticate } from './authenticate.ts';
import type { MockContext } from './mock-context.ts';
import { readText } from './read-body.ts';
import { clientError, notFound, type RequestErrorBody } from './request-error.ts';
import { respond } from './respond.ts';
import { validateWorkspaceUpdate } from './workspace-update.ts';

/**
 * `GET` and `PATCH /v3/workspaces/{identifier}` (README.md, "Workspace reads and updates"):
 * 200 with the Workspace; 401 without the key; 404 for an unknown workspace; for PATCH, 415
 * for a body that is not JSON by its type, 400 for one that does not parse or does not
 * validate (workspace-update.ts). The checks come in the order a Django REST framework view
 * makes them: authentication, the object, then the body. Every request is recorded in the
 * store, so a test can assert that none was made.
 */

const WORKSPACE_PATH = /^\/v3\/workspaces\/([^/]+)\/?$/;

/** Largest PATCH body in bytes: seven short fields, and an allow-list of a few hundred rules. */
const MAX_BODY_BYTES = 256 * 1024;

/** The identifier a path names, or undefined when it is not a workspace path. */
export function matchWorkspacePath(path: string): string | undefined {
  const segment = WORKSPACE_PATH.exec(path)?.[1];
  if (segment === undefined) return undefined;
  try {
    return decodeURIComponent(segment);
  } catch {
    // A malformed %-escape names no workspace.
    return undefined;
  }
}

export async function handleWorkspace(
  context: MockContext,
  req: IncomingMessage,
  res: ServerResponse,
  identifier: string,
  snakeCase: boolean,
): Promise<void> {
  const method = req.method ?? '';
  // undefined: no body (not a PATCH); null: a body over the limit.
  const text = method === 'PATCH' ? ((await readText(req, MAX_BODY_BYTES)) ?? null) : undefined;
  const answer = (status: number, body: unknown, headers?: Record<string, string>) => {
    context.workspaces.record({
      method,
      identifier,
      body: recordedBody(text),
      status,
      receivedAt: new Date().toISOString(),
    });
    respond(res, status, body, { snakeCase, ...(headers ? { headers } : {}) });
  };

  if (method !== 'GET' && method !== 'PATCH') {
    return answer(405, clientError('method_not_allowed', `Method "${method}" not allowed.`), {
      allow: 'GET, PATCH',
    });
  }
  const denied = authenticate(req.headers.authorization, context.apiKey);
  if (denied) return answer(401, denied, { 'www-authenticate': 'Bearer' });
  const current = context.workspaces.get(identifier);
  if (current === undefined) return answer(404, notFound());
  if (method === 'GET') return answer(200, current);

  const body = parseJsonBody(req.headers['content-type'], text);
  if (!body.ok) return answer(body.status, body.error);
  const validation = validateWorkspaceUpdate(body.value, snakeCase);
  if (!validation.ok) return answer(400, validation.error);
  const updated = context.workspaces.update(identifier, validation.patch);
  // The workspace was there a moment ago and nothing here deletes one.
  if (updated === undefined) return answer(404, notFound());
  context.logger.debug({ identifier, fields: Object.keys(validation.patch) }, 'mock API updated a workspace');
  return answer(200, updated);
}

type JsonBody = { ok: true; value: unknown } | { ok: false; status: number; error: RequestErrorBody };

function parseJsonBody(contentType: string | undefined, text: string | undefined | null): JsonBody {
  const mediaType = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (mediaType !== 'application/json') {
    const detail = `Unsupported media type "${mediaType}" in request; send application/json.`;
    return { ok: false, status: 415, error: clientError('unsupported_media_type', detail) };
  }
  if (text === null) {
    const detail = `The body is larger than ${MAX_BODY_BYTES} bytes.`;
    return { ok: false, status: 413, error: clientError('too_large', detail) };
  }
  try {
    return { ok: true, value: JSON.parse(text ?? '') };
  } catch (caught) {
    const reason = caught instanceof Error ? caught.message : 'unparseable';
    return { ok: false, status: 400, error: clientError('parse_error', `JSON parse error - ${reason}`) };
  }
}

function recordedBody(text: string | undefined | null): unknown {
  if (text === undefined || text === null || text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    // Not JSON: the text as sent is what a test wants to see.
    return text;
  }
}
