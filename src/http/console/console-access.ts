import type { IncomingMessage } from 'node:http';
import { sessionSeconds } from './console-session.ts';

/** The console's session cookie. */
export const sessionCookie = 'ingest_console';

/** A cookie's value from the Cookie header; undefined when absent. */
export function readCookie(req: IncomingMessage, name: string): string | undefined {
  for (const pair of (req.headers.cookie ?? '').split(';')) {
    const at = pair.indexOf('=');
    if (at > 0 && pair.slice(0, at).trim() === name) return pair.slice(at + 1).trim();
  }
  return undefined;
}

/**
 * The Set-Cookie of a session: HttpOnly (no script reads it), SameSite=Strict (no other site's
 * page sends it), Secure when the request came over TLS through a proxy. `value` null clears it.
 */
export function sessionCookieHeader(req: IncomingMessage, value: string | null): string {
  const secure = req.headers['x-forwarded-proto'] === 'https' ? '; Secure' : '';
  const life = value === null ? 'Max-Age=0' : `Max-Age=${sessionSeconds}`;
  return `${sessionCookie}=${value ?? ''}; Path=/; HttpOnly; SameSite=Strict; ${life}${secure}`;
}

/**
 * Whether a state-changing request comes from a page of this server. Browsers send Origin on
 * every POST and DELETE (and `null` from sandboxed or opaque contexts); a request without it
 * is a program's (curl, a test's fetch), which no page of another site can make carry the
 * console's cookie. Fetch metadata, when present, must agree.
 */
export function fromSameOrigin(req: IncomingMessage): boolean {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return false;
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    return false;
  }
  const forwarded = req.headers['x-forwarded-host'];
  return host === req.headers.host || (typeof forwarded === 'string' && host === forwarded);
}
