import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * The HTTP API's access check: `Authorization: Bearer <http.token>`. Both sides are hashed
 * to SHA-256 first, so the comparison is constant-time (timingSafeEqual) and takes equal
 * lengths whatever the client sends: neither the token's bytes nor its length leak through
 * response times.
 */
export type BearerCheck = (authorization: string | undefined) => boolean;

/** A check for `token`; null: no token configured, every request passes. */
export function createBearerCheck(token: string | null): BearerCheck {
  if (token === null) return () => true;
  const matches = createTokenCheck(token);
  return (authorization) => {
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? '');
    // Compared even when the header is missing or malformed: every refusal costs the same.
    return matches(match?.[1] ?? '') && match !== null;
  };
}

/** Whether a token someone gave (a header's, the console's sign-in form's) is `token`, in constant time. */
export function createTokenCheck(token: string): (given: string) => boolean {
  const expected = digest(token);
  return (given) => timingSafeEqual(digest(given), expected);
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
