import type { IncomingMessage, ServerResponse } from 'node:http';
import { authenticate } from './authenticate.ts';
import type { MockContext } from './mock-context.ts';
import { readText } from './read-body.ts';
import { clientError, notFound, type RequestErrorBody, validationError } from './request-error.ts';
import { respond } from './respond.ts';
import { subscriptionRequestSchema } from './resthook-subscriptions.ts';

/**
 * The resthook routes of the parsing API (README.md, "Resthooks"):
 * - `POST /v3/resthook_subscriptions` (JSON `{targetUrl, event, workspace | organization,
 *   version: "v3"}`): the mock POSTs the new subscription's secret to the target as
 *   `X-Hook-Secret` first, then answers 201 with the pending subscription, or 400 when the
 *   target did not answer the handshake with 2xx;
 * - `POST /v3/resthook_subscriptions/activate` with the `X-Hook-Secret` header → 200, the
 *   subscription active from then on;
 * - `GET /v3/resthook_subscriptions` (a one-page list), `GET` and `DELETE` of
 *   `/v3/resthook_subscriptions/{identifier}`.
 * The subscription's shape is the mock's: the service's public description gives the
 * request only.
 */

export const RESTHOOK_PATH = '/v3/resthook_subscriptions';

/** Largest subscription body in bytes: a URL and three short names. */
const MAX_BODY_BYTES = 16 * 1024;

export async function handleResthooks(
  context: MockContext,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  snakeCase: boolean,
): Promise<void> {
  const answer = (status: number, body: unknown, headers?: Record<string, string>) =>
    respond(res, status, body, { snakeCase, ...(headers ? { headers } : {}) });
  const denied = authenticate(req.headers.authorization, context.apiKey);
  if (denied) return answer(401, denied, { 'www-authenticate': 'Bearer' });
  const { subscriptions } = context.resthooks;
  const rest = path.slice(RESTHOOK_PATH.length).replace(/^\/|\/$/g, '');
  const method = req.method ?? '';

  if (rest === '') {
    if (method === 'GET') {
      const results = subscriptions.list();
      return answer(200, { count: results.length, next: null, previous: null, results });
    }
    if (method === 'POST') return subscribe(context, req, answer);
    return answer(405, methodNotAllowed(method), { allow: 'GET, POST' });
  }
  if (rest === 'activate') {
    if (method !== 'POST') return answer(405, methodNotAllowed(method), { allow: 'POST' });
    const secret = req.headers['x-hook-secret'];
    if (typeof secret !== 'string' || secret === '') {
      return answer(400, validationError(null, 'required', 'The X-Hook-Secret header is required.'));
    }
    const activated = subscriptions.activate(secret);
    if (activated === undefined) return answer(404, notFound());
    context.logger.debug(
      { subscription: activated.identifier },
      'mock API activated a resthook subscription',
    );
    return answer(200, activated);
  }
  const subscription = subscriptions.list().find((candidate) => candidate.identifier === rest);
  if (subscription === undefined) return answer(404, notFound());
  if (method === 'GET') return answer(200, subscription);
  if (method === 'DELETE') {
    subscriptions.remove(subscription.identifier);
    res.writeHead(204).end();
    return;
  }
  return answer(405, methodNotAllowed(method), { allow: 'GET, DELETE' });
}

async function subscribe(
  context: MockContext,
  req: IncomingMessage,
  answer: (status: number, body: unknown) => void,
): Promise<void> {
  const mediaType = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (mediaType !== 'application/json') {
    const detail = `Unsupported media type "${mediaType}" in request; send application/json.`;
    return answer(415, clientError('unsupported_media_type', detail));
  }
  const text = await readText(req, MAX_BODY_BYTES);
  if (text === undefined) return answer(413, clientError('too_large', `Body over ${MAX_BODY_BYTES} bytes.`));
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return answer(400, clientError('parse_error', 'JSON parse error.'));
  }
  const parsed = subscriptionRequestSchema.safeParse(json);
  if (!parsed.success) {
    const errors = parsed.error.issues.map((issue) => ({
      attr: issue.path.length === 0 ? null : issue.path.map(String).join('.'),
      code: issue.code === 'invalid_type' && issue.input === undefined ? 'required' : 'invalid',
      detail: issue.message,
    }));
    const body: RequestErrorBody = { type: 'validation_error', errors };
    return answer(400, body);
  }
  const request = parsed.data;
  if (request.organization != null && !knownOrganizations(context).has(request.organization)) {
    const detail = `Invalid pk "${request.organization}" - object does not exist.`;
    return answer(400, validationError('organization', 'does_not_exist', detail));
  }
  const { subscriptions, dispatcher } = context.resthooks;
  // Stored before the handshake: a subscriber may activate from inside its handshake handler.
  const { subscription, secret } = subscriptions.add(request, new Date());
  const handshake = await dispatcher.handshake(subscription.targetUrl, secret);
  if (!handshake.ok) {
    subscriptions.remove(subscription.identifier);
    return answer(400, validationError('targetUrl', 'invalid', handshake.detail));
  }
  context.logger.debug(
    { subscription: subscription.identifier, event: subscription.event, targetUrl: subscription.targetUrl },
    'mock API created a resthook subscription',
  );
  const current = subscriptions.list().find((candidate) => candidate.identifier === subscription.identifier);
  return answer(201, current ?? subscription);
}

/** The mock's own organization and every workspace's. */
function knownOrganizations(context: MockContext): Set<string> {
  const known = new Set([context.organization.identifier]);
  for (const workspace of context.workspaces.list()) known.add(workspace.organization.identifier);
  return known;
}

function methodNotAllowed(method: string): RequestErrorBody {
  return clientError('method_not_allowed', `Method "${method}" not allowed.`);
}
