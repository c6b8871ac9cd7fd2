import { describe, expect, it } from 'vitest';
import { compileAllowList } from '../../../src/sender/compile-allow-list.ts';
import { parseFromHeader } from '../../../src/sender/parse-from-header.ts';

/**
 * The sender check as the SMTP intake runs it (docs/architecture.md, "The sender check"): the From header
 * values through parseFromHeader, the address through the workspace's compiled allow-list.
 */
function admitted(rules: readonly string[], fromHeaders: readonly string[]): boolean {
  const sender = parseFromHeader(fromHeaders);
  return sender.ok && compileAllowList(rules)(sender.address);
}

describe('sender check with *@acme.example allowed', () => {
  const rules = ['*@acme.example'];

  it.each([
    ['a subdomain', ['a@sub.acme.example']],
    ['a longer domain', ['a@acme.example.evil']],
    ['a domain that ends the same', ['a@evilacme.example']],
    ['an address as the quoted display name', ['"ann@acme.example" <m@evil.test>']],
    ['an address in a quoted local part', ['"ann@acme.example x"@evil.test']],
    ['a comment splitting the domain', ['ann@acme.example(x)evil.test']],
    ['a NUL byte before a second @', ['ann@acme.example\u0000@evil.test']],
    ['two From headers', ['ann@acme.example', 'ann@acme.example']],
    ['a From with two mailboxes', ['ann@acme.example, bob@acme.example']],
    ['a group', ['Staff: ann@acme.example;']],
    ['an empty From', ['']],
    ['no From', []],
    [
      'an encoded-word name that decodes to an address',
      ['=?utf-8?B?YW5uQGFjbWUuZXhhbXBsZQ==?= <m@evil.test>'],
    ],
    ['an address as the comment', ['m@evil.test (ann@acme.example)']],
    ['two angle addresses', ['<ann@acme.example> <m@evil.test>']],
  ])('refuses %s', (_label, fromHeaders) => {
    expect(admitted(rules, fromHeaders)).toBe(false);
  });

  it.each([
    ['upper case', ['ANN@ACME.EXAMPLE']],
    ['a trailing dot', ['ann@acme.example.']],
    ['a display name', ['Ann Example <ann@acme.example>']],
    ['an old-style comment name', ['ann@acme.example (Ann Example)']],
  ])('admits %s', (_label, fromHeaders) => {
    expect(admitted(rules, fromHeaders)).toBe(true);
  });
});

describe('sender check with an IDN domain allowed', () => {
  it.each([
    ['*@bücher.example', 'a@xn--bcher-kva.example'],
    ['*@bücher.example', 'a@BÜCHER.example'],
    ['*@xn--bcher-kva.example', 'Ann <a@bücher.example>'],
  ])('%s admits %s', (rule, from) => {
    expect(admitted([rule], [from])).toBe(true);
  });
});
