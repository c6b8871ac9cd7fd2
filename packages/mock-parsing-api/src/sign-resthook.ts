import { createHmac } from 'node:crypto';

/**
 * The signature of a resthook delivery (README.md, "Resthooks"): the header
 * `X-Hook-Signature: <timestamp>.<signature>`, the signature being the hex HMAC-SHA256 of the
 * raw request body keyed with the organization's `resthookSignatureKey`. The timestamp is
 * not part of the signed input; it is inside the body too (`{event, timestamp, payload}`),
 * so it is covered, and a receiver compares the two and checks it is recent.
 */

export const SIGNATURE_HEADER = 'x-hook-signature';

/** `timestamp` in whole seconds since the Unix epoch. */
export function signResthook(rawBody: string | Buffer, key: string, timestamp: number): string {
  const signature = createHmac('sha256', key).update(rawBody).digest('hex');
  return `${timestamp}.${signature}`;
}

/** The delivery body, serialized once so the bytes signed are the bytes sent. */
export function resthookBody(event: string, timestamp: number, payload: unknown): string {
  return JSON.stringify({ event, timestamp, payload });
}
