import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ResthookReceiver } from '../uploader/resthook-receiver.ts';
import { json, refuse } from './respond.ts';

/**
 * POST /v1/resthooks: where the parsing service pushes parse events (trackCompletion via
 * resthook). It needs no bearer token: the service cannot send one. A handshake
 * (`X-Hook-Secret`) is taken only while this gateway subscribes; a delivery only with a valid
 * `X-Hook-Signature` by a subscribed organization's key (resthook-receiver.ts).
 */

export const RESTHOOK_ROUTE = '/v1/resthooks';

/** Largest delivery: a Document with its parse result. */
const MAX_BODY_BYTES = 8 * 1024 * 1024;

export async function handleResthook(
  receiver: ResthookReceiver,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  if (req.method !== 'POST') {
    res.setHeader('allow', 'POST');
    return refuse(res, 405, 'method not allowed: the service POSTs its events here');
  }
  const secret = req.headers['x-hook-secret'];
  if (typeof secret === 'string' && secret !== '') {
    req.resume();
    const answer = await receiver.handshake(secret);
    // The secret is echoed as REST Hooks subscribers do, besides the activation call.
    if (answer.status === 200) res.setHeader('x-hook-secret', secret);
    return answer.status === 200
      ? json(res, 200, { status: answer.message })
      : refuse(res, answer.status, answer.message);
  }
  const body = await readBody(req);
  if (body === null) return refuse(res, 413, `body over ${MAX_BODY_BYTES} bytes`);
  const signature = req.headers['x-hook-signature'];
  const answer = await receiver.deliver(body, typeof signature === 'string' ? signature : undefined);
  if (answer.status === 200) return json(res, 200, { status: answer.message });
  if (answer.status === 401) res.setHeader('www-authenticate', 'X-Hook-Signature');
  return refuse(res, answer.status, answer.message);
}

async function readBody(req: IncomingMessage): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > MAX_BODY_BYTES) {
      req.resume();
      return null;
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}
