import { describe, expect, it } from 'vitest';
import { createConsoleSessions, sessionSeconds } from '../../../../src/http/console/console-session.ts';

describe('console sessions', () => {
  let clock = Date.parse('2025-01-01T00:00:00Z');
  const now = () => clock;

  it('reads back the session it issued, with the same CSRF token, and never holds the token', () => {
    const sessions = createConsoleSessions('secret-token', now);
    const { cookie, session } = sessions.issue();
    expect(cookie).not.toContain('secret-token');
    expect(sessions.read(cookie)).toEqual(session);
    expect(session.csrf).toMatch(/^[\w-]{43}$/);
    expect(sessions.issue().session.csrf).not.toBe(session.csrf);
  });

  it('accepts a cookie issued by another process sharing the token, but not one of another token', () => {
    const { cookie } = createConsoleSessions('secret-token', now).issue();
    expect(createConsoleSessions('secret-token', now).read(cookie)).not.toBeNull();
    expect(createConsoleSessions('other-token', now).read(cookie)).toBeNull();
  });

  it.each([
    ['an altered time', (cookie: string) => cookie.replace(/^\d/, (d) => String((Number(d) + 1) % 10))],
    [
      'an altered nonce',
      (cookie: string) => cookie.replace(/\.(.)/, (_, c: string) => `.${c === 'a' ? 'b' : 'a'}`),
    ],
    ['no mac', (cookie: string) => cookie.split('.').slice(0, 2).join('.')],
    ['garbage', () => 'x'],
    ['nothing', () => ''],
  ])('refuses %s', (_label, alter) => {
    const sessions = createConsoleSessions('secret-token', now);
    expect(sessions.read(alter(sessions.issue().cookie))).toBeNull();
  });

  it('ends a session after sessionSeconds', () => {
    const sessions = createConsoleSessions('secret-token', now);
    const { cookie } = sessions.issue();
    clock += (sessionSeconds - 1) * 1000;
    expect(sessions.read(cookie)).not.toBeNull();
    clock += 2000;
    expect(sessions.read(cookie)).toBeNull();
  });
});
