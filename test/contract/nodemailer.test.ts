import addressparser from 'nodemailer/lib/addressparser';
import MailComposer from 'nodemailer/lib/mail-composer';
import { describe, expect, it } from 'vitest';
import { declaredVersion, EXACT_VERSION, installedManifest } from '../../harness/pinned-version.ts';

/**
 * nodemailer's lib/ modules the project imports (docs/overrides.md, "nodemailer"): the address
 * parser that src/sender/parse-from-header.ts reads the header From with, and, in the test
 * suite only, the composer harness/messages.ts builds mail with. parse-from-header.ts
 * accepts only what has the shape of one mailbox, so it relies on the parser's output shape:
 * a mailbox as {address, name}, a group as {name, group}, one item per address.
 */

describe('nodemailer, as the sender check parses the From', () => {
  it('is installed at the exact version package.json pins', () => {
    expect(declaredVersion('nodemailer')).toMatch(EXACT_VERSION);
    expect(installedManifest('nodemailer').version).toBe(declaredVersion('nodemailer'));
  });

  it.each([
    { value: 'ann@example.com', parsed: [{ address: 'ann@example.com', name: '' }] },
    { value: 'Ann Example <ann@example.com>', parsed: [{ address: 'ann@example.com', name: 'Ann Example' }] },
    {
      value: '"a@allowed.example" <x@evil.example>',
      parsed: [{ address: 'x@evil.example', name: 'a@allowed.example' }],
    },
    {
      value: 'ann@example.com, bob@example.com',
      parsed: [
        { address: 'ann@example.com', name: '' },
        { address: 'bob@example.com', name: '' },
      ],
    },
    {
      value: 'team: bob@example.com, c@example.com;',
      parsed: [
        {
          name: 'team',
          group: [
            { address: 'bob@example.com', name: '' },
            { address: 'c@example.com', name: '' },
          ],
        },
      ],
    },
  ])('addressparser($value)', ({ value, parsed }) => {
    expect(addressparser(value)).toEqual(parsed);
  });

  it('still composes a message from lib/mail-composer, as the test suite does', async () => {
    const raw = await new MailComposer({ from: 'a@example.com', to: 'b@example.com', text: 'hi' })
      .compile()
      .build();
    expect(raw.toString()).toMatch(/^From: a@example\.com\r\n/m);
  });
});
