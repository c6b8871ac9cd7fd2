import addressparser from 'nodemailer/lib/addressparser';
import { describe, expect, it } from 'vitest';
import { parseFromHeader } from '../../../src/sender/parse-from-header.ts';

/**
 * Each hostile or odd From value with what nodemailer's addressparser makes of it (`parser`)
 * and what parseFromHeader answers (`address` or `reason`). Where the parser guesses, the
 * answer is a refusal; where it reads the real address, the answer is that address, never
 * acme.example. The parser column is asserted too, so a change in the library shows up here.
 */
const table: ReadonlyArray<{
  from: string;
  parser: ReturnType<typeof addressparser>;
  address?: string;
  reason?: string;
}> = [
  {
    from: 'ann@acme.example',
    parser: [{ address: 'ann@acme.example', name: '' }],
    address: 'ann@acme.example',
  },
  {
    from: 'Ann <ANN@ACME.EXAMPLE>',
    parser: [{ address: 'ANN@ACME.EXAMPLE', name: 'Ann' }],
    address: 'ANN@acme.example',
  },
  {
    from: 'ann@acme.example.',
    parser: [{ address: 'ann@acme.example.', name: '' }],
    address: 'ann@acme.example',
  },
  {
    from: 'a@BÜCHER.example',
    parser: [{ address: 'a@BÜCHER.example', name: '' }],
    address: 'a@xn--bcher-kva.example',
  },
  // the display name never counts, however much it looks like an address
  {
    from: '"ann@acme.example" <m@evil.test>',
    parser: [{ address: 'm@evil.test', name: 'ann@acme.example' }],
    address: 'm@evil.test',
  },
  {
    from: 'ann@acme.example <m@evil.test>',
    parser: [{ address: 'm@evil.test', name: 'ann@acme.example' }],
    address: 'm@evil.test',
  },
  {
    from: '=?utf-8?B?YW5uQGFjbWUuZXhhbXBsZQ==?= <m@evil.test>',
    parser: [{ address: 'm@evil.test', name: '=?utf-8?B?YW5uQGFjbWUuZXhhbXBsZQ==?=' }],
    address: 'm@evil.test',
  },
  {
    from: 'm@evil.test (ann@acme.example)',
    parser: [{ address: 'm@evil.test', name: 'ann@acme.example' }],
    address: 'm@evil.test',
  },
  // a quoted local part keeps its @: the domain is the one after the quotes
  {
    from: '"ann@acme.example"@evil.test',
    parser: [{ address: '"ann@acme.example"@evil.test', name: '' }],
    address: '"ann@acme.example"@evil.test',
  },
  {
    from: '"ann@acme.example x"@evil.test',
    parser: [{ address: '"ann@acme.example x"@evil.test', name: '' }],
    reason: 'From address is malformed',
  },
  // the parser guesses: a comment splits the domain, the tail becomes the name
  {
    from: 'ann@acme.example(x)evil.test',
    parser: [{ address: 'ann@acme.example', name: 'evil.test' }],
    reason: 'From is malformed',
  },
  {
    from: 'ann(x)@acme.example',
    parser: [{ address: 'ann@acme.example', name: 'x' }],
    reason: 'From is malformed',
  },
  {
    from: 'a@acme.example b@evil.test',
    parser: [{ address: 'a@acme.example', name: 'b@evil.test' }],
    reason: 'From is malformed',
  },
  {
    from: 'Ann <ann@acme.example> <m@evil.test>',
    parser: [{ address: 'ann@acme.example', name: 'Ann m@evil.test' }],
    reason: 'From is malformed',
  },
  {
    from: '<ann@acme.example',
    parser: [{ address: 'ann@acme.example', name: '' }],
    reason: 'From is malformed',
  },
  {
    from: '"Ann <ann@acme.example>',
    parser: [{ address: '"Ann <ann"@acme.example>', name: '' }],
    reason: 'From is malformed',
  },
  // the parser drops a NUL, which hides the second @ from it: refused before parsing
  {
    from: 'ann@acme.example\u0000@evil.test',
    parser: [{ address: 'ann@acme.example@evil.test', name: '' }],
    reason: 'From holds a control character',
  },
  {
    from: 'ann\u0000@acme.example',
    parser: [{ address: 'ann@acme.example', name: '' }],
    reason: 'From holds a control character',
  },
  // an @ in an unquoted local part: split at the last @, but not a dot-atom
  {
    from: 'ann@acme.example@evil.test',
    parser: [{ address: 'ann@acme.example@evil.test', name: '' }],
    reason: 'From address is malformed',
  },
  // the gateway takes hostnames only
  { from: 'a@[192.0.2.1]', parser: [{ address: 'a@[192.0.2.1]', name: '' }], reason: 'From is malformed' },
  {
    from: 'a@[x@acme.example]',
    parser: [{ address: 'a@[x@acme.example]', name: '' }],
    reason: 'From is malformed',
  },
  {
    from: 'a..b@acme.example',
    parser: [{ address: 'a..b@acme.example', name: '' }],
    reason: 'From address is malformed',
  },
  // not one mailbox
  {
    from: 'a@acme.example, b@acme.example',
    parser: [
      { address: 'a@acme.example', name: '' },
      { address: 'b@acme.example', name: '' },
    ],
    reason: 'From holds 2 mailboxes',
  },
  {
    from: 'Team: ann@acme.example;',
    parser: [{ name: 'Team', group: [{ address: 'ann@acme.example', name: '' }] }],
    reason: 'From is a group',
  },
  { from: 'Undisclosed:;', parser: [{ name: 'Undisclosed', group: [] }], reason: 'From is a group' },
  { from: '', parser: [], reason: 'From is empty' },
  { from: ' ', parser: [], reason: 'From is empty' },
  { from: 'ann', parser: [{ address: '', name: 'ann' }], reason: 'From is malformed' },
  { from: '<>', parser: [{ address: '', name: '' }], reason: 'From is malformed' },
];

describe('parseFromHeader', () => {
  it.each(table)('addressparser reads $from as the table says', ({ from, parser }) => {
    expect(addressparser(from)).toEqual(parser);
  });

  it.each(table.filter((row) => row.address !== undefined))('$from → $address', ({ from, address }) => {
    const result = parseFromHeader([from]);
    expect(result).toMatchObject({ ok: true, address: { address } });
  });

  it.each(table.filter((row) => row.reason !== undefined))('$from → "$reason"', ({ from, reason }) => {
    expect(parseFromHeader([from])).toEqual({ ok: false, reason });
  });

  it.each([
    { values: [], reason: 'no From header' },
    { values: ['ann@acme.example', 'm@evil.test'], reason: '2 From headers' },
    { values: ['ann@acme.example', 'ann@acme.example', 'ann@acme.example'], reason: '3 From headers' },
  ])('$values.length headers → "$reason"', ({ values, reason }) => {
    expect(parseFromHeader(values)).toEqual({ ok: false, reason });
  });

  it('splits the address it returns into local part and normalised domain', () => {
    expect(parseFromHeader(['Ann Example <Ann@Acme.Example.>'])).toEqual({
      ok: true,
      address: { local: 'Ann', domain: 'acme.example', address: 'Ann@acme.example' },
    });
  });
});
