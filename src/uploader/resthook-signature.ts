import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The parsing service's signature on a parse event it pushes (docs/parsing-api.md, "Parse
 * events"): `X-Hook-Signature: <unix seconds>.<hex HMAC-SHA256 of the raw body>`, keyed with
 * the organization's `resthookSignatureKey`. The body carries the same timestamp, so the
 * signature covers it; a delivery is taken only when the timestamp is recent, which bounds
 * how long a captured delivery could be replayed (the repeats within that time are caught by
 * their signature: resthook-receiver.ts).
 */

export type SignatureCheck =
  | { ok: true; timestamp: number; signature: string; key: string }
  | { ok: false; problem: string };

/** Default accepted age of a delivery's timestamp, either way: 5 minutes. */
export const DEFAULT_MAX_AGE_SECONDS = 300;

const HEADER_FORMAT = /^\s*(\d{1,12})\.([0-9a-fA-F]{64})\s*$/;

export function verifyResthookSignature(input: {
  rawBody: Buffer;
  header: string | undefined;
  /** The signing keys of the organizations the gateway subscribed with. */
  keys: readonly string[];
  /** Unix seconds now. */
  nowSeconds: number;
  maxAgeSeconds: number;
}): SignatureCheck {
  if (input.header === undefined) return { ok: false, problem: 'no X-Hook-Signature header' };
  const match = HEADER_FORMAT.exec(input.header);
  if (!match?.[1] || !match[2]) {
    return { ok: false, problem: 'X-Hook-Signature is not <unix seconds>.<hex HMAC-SHA256>' };
  }
  const timestamp = Number(match[1]);
  const signature = match[2].toLowerCase();
  if (Math.abs(input.nowSeconds - timestamp) > input.maxAgeSeconds) {
    return {
      ok: false,
      problem: `the signature's timestamp is ${input.nowSeconds - timestamp} s old; at most ${input.maxAgeSeconds} s is accepted`,
    };
  }
  const given = Buffer.from(signature, 'hex');
  // Every key is tried, matching or not: the time taken does not tell which one matched.
  let matched: string | undefined;
  for (const key of input.keys) {
    const expected = createHmac('sha256', key).update(input.rawBody).digest();
    if (timingSafeEqual(expected, given) && matched === undefined) matched = key;
  }
  if (matched === undefined) return { ok: false, problem: 'the signature does not match the body' };
  return { ok: true, timestamp, signature, key: matched };
}

/** What a delivery is remembered by, to take it only once: its signature's digest. */
export function deliveryDigest(timestamp: number, signature: string): string {
  return createHash('sha256').update(`${timestamp}.${signature}`).digest('hex').slice(0, 32);
}

/** The header a sender writes: `<timestamp>.<hex HMAC-SHA256 of body>` (for tests and examples). */
export function signResthookBody(rawBody: string | Buffer, key: string, timestamp: number): string {
  return `${timestamp}.${createHmac('sha256', key).update(rawBody).digest('hex')}`;
}
