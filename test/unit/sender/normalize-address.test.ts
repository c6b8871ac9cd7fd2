import { describe, expect, it } from 'vitest';
import { normalizeAddress, normalizeDomain } from '../../../src/sender/normalize-address.ts';

describe('normalizeAddress', () => {
  it.each([
    { input: 'ann@acme.example', local: 'ann', domain: 'acme.example' },
    { input: 'ANN@ACME.EXAMPLE', local: 'ANN', domain: 'acme.example' },
    { input: 'ann@acme.example.', local: 'ann', domain: 'acme.example' },
    { input: 'a@bücher.example', local: 'a', domain: 'xn--bcher-kva.example' },
    { input: 'a@BÜCHER.example', local: 'a', domain: 'xn--bcher-kva.example' },
    { input: 'a@XN--BCHER-KVA.example', local: 'a', domain: 'xn--bcher-kva.example' },
    { input: 'a@ａｃｍｅ.example', local: 'a', domain: 'acme.example' },
    { input: 'documents@ingest.localhost', local: 'documents', domain: 'ingest.localhost' },
    { input: 'postmaster@localhost', local: 'postmaster', domain: 'localhost' },
    // split at the last @: the domain is what a mail server would deliver to
    { input: '"ann@acme.example"@evil.test', local: '"ann@acme.example"', domain: 'evil.test' },
    { input: 'ann@acme.example@evil.test', local: 'ann@acme.example', domain: 'evil.test' },
    { input: 'Ünïcode@acme.example', local: 'Ünïcode', domain: 'acme.example' },
  ])('$input → $local @ $domain', ({ input, local, domain }) => {
    expect(normalizeAddress(input)).toEqual({ local, domain, address: `${local}@${domain}` });
  });

  it.each([
    { why: 'empty', input: '' },
    { why: 'no @', input: 'ann' },
    { why: 'empty local part', input: '@acme.example' },
    { why: 'empty domain', input: 'ann@' },
    { why: 'only a dot for a domain', input: 'ann@.' },
    { why: 'NUL before a second @', input: 'ann@acme.example\u0000@evil.test' },
    { why: 'NUL in the local part', input: 'an\u0000n@acme.example' },
    { why: 'CR LF', input: 'ann@acme.example\r\n' },
    { why: 'bidi override', input: 'ann\u202e@acme.example' },
    { why: 'zero-width space', input: 'a\u200bnn@acme.example' },
    { why: 'space', input: 'a nn@acme.example' },
    { why: 'tab', input: 'ann@acme.example\t' },
    { why: 'no-break space', input: 'ann@acme\u00a0.example' },
    { why: 'domain literal', input: 'ann@[192.0.2.1]' },
    { why: '@ inside a domain literal', input: 'a@[x@acme.example]' },
    { why: 'IPv4 written as a name', input: 'ann@192.0.2.1' },
    { why: 'hex IPv4 the URL parser would accept', input: 'ann@0x7f.1' },
    { why: 'empty label', input: 'ann@acme..example' },
    { why: 'label starting with -', input: 'ann@-acme.example' },
    { why: 'underscore', input: 'ann@a_b.example' },
    { why: 'percent', input: 'ann@a%b.example' },
    { why: 'label over 63 octets', input: `ann@${'a'.repeat(64)}.example` },
    { why: 'name over 253 octets', input: `ann@${'abcdefghi.'.repeat(26)}example` },
  ])('refuses $why', ({ input }) => {
    expect(normalizeAddress(input)).toBeNull();
  });
});

describe('normalizeDomain', () => {
  it.each([
    { input: 'Acme.Example.', expected: 'acme.example' },
    { input: 'straße.de', expected: 'xn--strae-oqa.de' },
    { input: 'acme.example..', expected: null },
    { input: '', expected: null },
  ])('$input → $expected', ({ input, expected }) => {
    expect(normalizeDomain(input)).toBe(expected);
  });
});
