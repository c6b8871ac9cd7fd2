import type { IncomingMessage, ServerResponse } from 'node:http';
import { mockFaultSchema } from './faults.ts';
import type { MockContext } from './mock-context.ts';
import { publicView } from './received-uploads.ts';
import { clientError, notFound, validationError } from './request-error.ts';
import { respond } from './respond.ts';

/**
 * The mock's test-control surface, for tests and tools in another process than the mock:
 * - `POST /_mock/faults` with a JSON fault (`{"status": 503}`, `{"status": 429, "headers":
 *   {"retry-after": "2"}}`, `{"drop": true}`) queues it for the next upload → 204;
 * - `GET /_mock/uploads` → `{uploads: [...]}`, the received uploads without bytes or key.
 * It has no authentication on purpose: it is a test fixture, not part of the API, and the
 * mock is meant to listen on loopback. Nothing here exists on the real service.
 */

/** Largest fault body in bytes; a fault is a status, a few headers and a small body. */
const MAX_CONTROL_BODY_BYTES = 64 * 1024;

export async function handleControl(
  context: MockContext,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): Promise<void> {
  if (path === '/_mock/uploads') {
    if (req.method !== 'GET') return methodNotAllowed(req, res);
    return respond(res, 200, { uploads: context.uploads.uploads.map(publicView) });
  }
  if (path === '/_mock/faults') {
    if (req.method !== 'POST') return methodNotAllowed(req, res);
    const text = await readText(req, MAX_CONTROL_BODY_BYTES);
    if (text === undefined) {
      return respond(res, 413, clientError('too_large', `Body over ${MAX_CONTROL_BODY_BYTES} bytes.`));
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return respond(res, 400, clientError('parse_error', 'JSON parse error.'));
    }
    const parsed = mockFaultSchema.safeParse(json);
    if (!parsed.success) {
      const detail = parsed.error.issues.map((issue) => issue.message).join('; ');
      return respond(res, 400, validationError(null, 'invalid', detail));
    }
    context.faults.enqueue(parsed.data);
    res.writeHead(204).end();
    return;
  }
  return respond(res, 404, notFound());
}

function methodNotAllowed(req: IncomingMessage, res: ServerResponse): void {
  const detail = `Method "${req.method ?? ''}" not allowed.`;
  respond(res, 405, clientError('method_not_allowed', detail));
}

/** The body as UTF-8, or undefined when it is longer than `limit` (the rest is discarded). */
async function readText(req: IncomingMessage, limit: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buffer.length;
    if (size <= limit) chunks.push(buffer);
  }
  return size > limit ? undefined : Buffer.concat(chunks).toString('utf8');
}
