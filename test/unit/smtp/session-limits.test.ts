import type { SMTPServerAddress } from 'smtp-server';
import { describe, expect, it } from 'vitest';
import {
  disabledCommands,
  exceedsRecipientLimit,
  tlsRequiredRefusal,
  tooManyRecipients,
} from '../../../src/smtp/session-limits.ts';

const rcpt = (address: string): SMTPServerAddress => ({ address, args: false });

describe('exceedsRecipientLimit', () => {
  it.each<[string, string[], string, number, boolean]>([
    ['below the limit', ['a@x'], 'b@x', 2, false],
    ['the last one allowed', ['a@x'], 'b@x', 2, false],
    ['one past the limit', ['a@x', 'b@x'], 'c@x', 2, true],
    ['a repeat at the limit', ['a@x', 'b@x'], 'B@X', 2, false],
    ['limit 1, a second', ['a@x'], 'b@x', 1, true],
    ['limit 1, the first', [], 'a@x', 1, false],
  ])('%s', (_case, accepted, address, max, expected) => {
    expect(exceedsRecipientLimit(accepted.map(rcpt), address, max)).toBe(expected);
  });

  it('refuses with TOO_MANY_RECIPIENTS naming the limit', () => {
    const err = tooManyRecipients(5);
    expect(err.code).toBe('TOO_MANY_RECIPIENTS');
    expect(err.message).toContain('at most 5');
  });
});

describe('disabledCommands', () => {
  it('never serves AUTH, XCLIENT, XFORWARD or the sendmail jokes', () => {
    for (const startTls of [true, false]) {
      expect(disabledCommands(startTls)).toEqual(
        expect.arrayContaining(['AUTH', 'XCLIENT', 'XFORWARD', 'WIZ', 'SHELL', 'KILL']),
      );
    }
  });

  it('disables STARTTLS without a certificate only', () => {
    expect(disabledCommands(false)).toContain('STARTTLS');
    expect(disabledCommands(true)).not.toContain('STARTTLS');
  });
});

describe('tlsRequiredRefusal', () => {
  it.each([
    [true, false, 'TLS_REQUIRED'],
    [true, true, null],
    [false, false, null],
    [false, true, null],
  ])('requireTls %s, secure %s → %s', (requireTls, secure, code) => {
    expect(tlsRequiredRefusal(requireTls, { secure })?.code ?? null).toBe(code);
  });
});
