import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** A signed-in console: what its forms must send back to prove they came from its pages. */
export interface ConsoleSession {
  /** The per-session CSRF token, checked on every state-changing request. */
  csrf: string;
}

export interface ConsoleSessions {
  /** A new session: the cookie value to set, and the session it opens. */
  issue(): { cookie: string; session: ConsoleSession };
  /** The session a cookie value holds; null when it is forged, altered or expired. */
  read(cookie: string | undefined): ConsoleSession | null;
}

/** Seconds a console session lasts: a working day, after which the token is asked again. */
export const sessionSeconds = 12 * 3600;

/**
 * Console sessions, stateless: the cookie holds `<issued>.<nonce>.<mac>`, the mac an HMAC of
 * the first two under a key derived from http.token. The token itself never leaves the
 * server, a cookie cannot be forged without it, any gateway process sharing the token
 * accepts it, and changing the token ends every session. Without a token a random key per
 * process serves: the console is open then, and the session only carries the CSRF token.
 */
export function createConsoleSessions(token: string | null, now: () => number = Date.now): ConsoleSessions {
  const key =
    token === null
      ? randomBytes(32)
      : createHmac('sha256', 'ingest-gateway console session key').update(token, 'utf8').digest();
  const mac = (purpose: string, text: string) =>
    createHmac('sha256', key).update(`${purpose}\n${text}`, 'utf8').digest('base64url');
  const sessionOf = (nonce: string): ConsoleSession => ({ csrf: mac('csrf', nonce) });

  return {
    issue() {
      const body = `${Math.floor(now() / 1000)}.${randomBytes(18).toString('base64url')}`;
      const nonce = body.split('.')[1] ?? '';
      return { cookie: `${body}.${mac('session', body)}`, session: sessionOf(nonce) };
    },
    read(cookie) {
      const match = /^(\d{1,12})\.([\w-]{24})\.([\w-]{43})$/.exec(cookie ?? '');
      if (!match?.[1] || !match[2] || !match[3]) return null;
      if (!equal(mac('session', `${match[1]}.${match[2]}`), match[3])) return null;
      const age = now() / 1000 - Number(match[1]);
      if (age < 0 || age > sessionSeconds) return null;
      return sessionOf(match[2]);
    },
  };
}

/** Constant-time comparison of two tokens, whatever their lengths. */
export function equal(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}
