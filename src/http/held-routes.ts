import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HeldMail, HeldOutcome } from '../queue/held-mail.ts';
import type { AllowScope } from '../sender/allowed-sender-rules.ts';
import { json, refuse } from './respond.ts';

/** Bytes of a request body read, at most: the release body is a few dozen. */
const MAX_BODY_BYTES = 4096;

/**
 * POST /v1/messages/{id}/release and /discard (README, "Held mail"): 200 with the record (also
 * for a repeat: nothing is done twice), 404 for no such message, 409 for a message not held or
 * already gone the other way. A release may ask `{"allowSender": "address" | "domain"}`: the
 * sender is added to the allow-lists first, and when the parsing service does not take the
 * change the answer is 502 and the message stays held. Any other body is refused with 400.
 */
export async function changeHeld(
  req: IncomingMessage,
  res: ServerResponse,
  messageId: string,
  action: 'release' | 'discard',
  held: HeldMail,
): Promise<void> {
  const body = await readBody(req);
  if (body === null) return refuse(res, 413, `the request body is larger than ${MAX_BODY_BYTES} bytes`);
  const options = readOptions(body, action);
  if (typeof options === 'string') return refuse(res, 400, options);
  answer(
    res,
    messageId,
    action === 'release' ? await held.release(messageId, options) : await held.discard(messageId),
  );
}

/** The release options a body asks for, or why it is refused. */
function readOptions(body: string, action: 'release' | 'discard'): { allowSender?: AllowScope } | string {
  if (body.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return 'the request body is not JSON';
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return 'the request body is not a JSON object';
  }
  const { allowSender, ...rest } = parsed as { allowSender?: unknown };
  const unknown = Object.keys(rest);
  if (action === 'discard' && (unknown.length > 0 || allowSender !== undefined)) {
    return 'discard takes no options';
  }
  if (unknown.length > 0) return `release takes only allowSender, not ${unknown.join(', ')}`;
  if (allowSender === undefined) return {};
  if (allowSender !== 'address' && allowSender !== 'domain') {
    return 'allowSender is "address" or "domain"';
  }
  return { allowSender };
}

function answer(res: ServerResponse, messageId: string, outcome: HeldOutcome): void {
  if (outcome.kind === 'missing') refuse(res, 404, `no message ${messageId}`);
  else if (outcome.kind === 'conflict' || outcome.kind === 'not_allowed') refuse(res, 409, outcome.reason);
  else if (outcome.kind === 'service_failed') refuse(res, 502, outcome.reason);
  else
    json(res, 200, {
      queued: outcome.queued,
      ...(outcome.allowed ? { allowed: outcome.allowed } : {}),
      record: outcome.record,
    });
}

/** The body as text, or null when it is longer than MAX_BODY_BYTES. */
async function readBody(req: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of req) {
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    length += bytes.length;
    if (length > MAX_BODY_BYTES) return null;
    chunks.push(bytes);
  }
  return Buffer.concat(chunks).toString('utf8');
}
