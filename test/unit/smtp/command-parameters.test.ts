import type { SMTPServerAddress } from 'smtp-server';
import { describe, expect, it } from 'vitest';
import { unknownParameter, utf8AddressRefusal, writtenInUtf8 } from '../../../src/smtp/command-parameters.ts';

const address = (args: Record<string, string | boolean> | false): SMTPServerAddress =>
  ({ address: 'a@b.example', args }) as SMTPServerAddress;

describe('unknownParameter', () => {
  it.each<['MAIL' | 'RCPT', Record<string, string | boolean> | false, string | null]>([
    ['MAIL', false, null],
    ['MAIL', { SIZE: '10', BODY: '8BITMIME', SMTPUTF8: true }, null],
    ['MAIL', { FOO: 'bar' }, 'FOO'],
    ['MAIL', { SIZE: '10', RET: 'FULL' }, 'RET'],
    ['MAIL', { REQUIRETLS: true }, 'REQUIRETLS'],
    ['RCPT', false, null],
    ['RCPT', { NOTIFY: 'NEVER' }, 'NOTIFY'],
    ['RCPT', { SIZE: '10' }, 'SIZE'],
  ])('%s with %j: %s', (command, args, unknown) => {
    const refusal = unknownParameter(command, address(args));
    expect(refusal?.code ?? null).toBe(unknown === null ? null : 'UNKNOWN_PARAMETER');
    if (unknown !== null) expect(refusal?.message).toBe(`${command} parameter ${unknown} not recognized`);
  });
});

describe('writtenInUtf8', () => {
  it.each([
    ['MAIL FROM:<ann@acme.example>', false],
    ['RCPT TO:<orders@xn--bcher-kva.example>', false],
    ['RCPT TO:<orders@bücher.example>', true],
    ['MAIL FROM:<jörg@acme.example> SMTPUTF8', true],
    ['MAIL FROM:<> ', false],
  ])('%s: %s', (line, expected) => {
    expect(writtenInUtf8(line)).toBe(expected);
  });
});

describe('utf8AddressRefusal', () => {
  it.each([
    [true, false, 'UTF8_ADDRESS_WITHOUT_SMTPUTF8'],
    [true, true, null],
    [false, false, null],
  ])('written in UTF-8 %s, SMTPUTF8 %s: %s', (utf8, smtpUtf8, code) => {
    const written = { address: 'jörg@acme.example', args: false as const, writtenInUtf8: utf8 };
    expect(utf8AddressRefusal(written, smtpUtf8)?.code ?? null).toBe(code);
  });
});
