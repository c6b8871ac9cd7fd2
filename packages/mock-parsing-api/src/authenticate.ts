import { createHash, timingSafeEqual } from 'node:crypto';
import { clientError, type RequestErrorBody } from './request-error.ts';

/**
 * The mock's check of `Authorization: Bearer <apiKey>` (README.md, "Authentication and
 * errors"). Returns the 401 body to send, or undefined when the request may proceed. The
 * messages are the ones Django REST framework gives, which the service's RequestError shape
 * comes from.
 */
export function authenticate(header: string | undefined, apiKey: string): RequestErrorBody | undefined {
  if (header === undefined || header.trim() === '') {
    return clientError('not_authenticated', 'Authentication credentials were not provided.');
  }
  const match = /^bearer\s+(\S+)\s*$/i.exec(header.trim());
  const token = match?.[1];
  if (token === undefined) return clientError('authentication_failed', 'Invalid token header.');
  // Digests first so the comparison does not leak the key's length through timing, in the
  // unlikely case the mock listens where someone could measure it.
  const given = createHash('sha256').update(token).digest();
  const expected = createHash('sha256').update(apiKey).digest();
  return timingSafeEqual(given, expected)
    ? undefined
    : clientError('authentication_failed', 'Invalid token.');
}
