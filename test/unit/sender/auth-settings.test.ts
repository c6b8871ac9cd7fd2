import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../../src/config/load-config.ts';
import type { GatewayConfig } from '../../../src/config/schema.ts';
import { RefusalError } from '../../../src/errors.ts';
import { isDnsServerAddress, lookupErrorCode } from '../../../src/sender/dns-resolver.ts';
import { replyFor } from '../../../src/smtp/smtp-reply.ts';

const base = `api:
  mock: true
workspaces:
  - identifier: ws-1
    ingestEmail: in@ingest.example
`;

function load(extra: string): GatewayConfig {
  return parseConfig({ text: `${base}${extra}`, env: {}, source: 'inline' });
}

function problemsOf(extra: string): readonly string[] {
  try {
    load(extra);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

describe('auth and dns configuration', () => {
  it('defaults to off, no trusted sealers and the system resolver', () => {
    const config = load('');
    expect(config.auth).toEqual({ senderAuthentication: 'off', trustedArcSealers: [] });
    expect(config.dns).toEqual({ servers: [], timeout: 5000, tries: 2 });
    expect(config.workspaces[0]?.senderAuthentication).toBeUndefined();
  });

  it('takes a default, per-workspace modes, sealers (normalised) and resolvers', () => {
    const config = load(`    senderAuthentication: dmarc
auth:
  senderAuthentication: aligned
  trustedArcSealers: [Lists.Example., bücher.example]
dns:
  servers: ["10.0.0.53", "10.0.0.53:5353", "[::1]:5353", "2001:db8::53"]
  timeout: 1500
  tries: 1
`);
    expect(config.auth).toEqual({
      senderAuthentication: 'aligned',
      trustedArcSealers: ['lists.example', 'xn--bcher-kva.example'],
    });
    expect(config.dns.servers).toEqual(['10.0.0.53', '10.0.0.53:5353', '[::1]:5353', '2001:db8::53']);
    expect(config.workspaces[0]?.senderAuthentication).toBe('dmarc');
  });

  it('lists every mistake with its path', () => {
    expect(
      problemsOf(`    senderAuthentication: strict
auth:
  senderAuthentication: yes
  trustedArcSealers: ["lists example"]
dns:
  servers: [resolver.example, "10.0.0.53:99999"]
  timeout: 10
`),
    ).toEqual([
      'auth.senderAuthentication: expected one of off, aligned, dmarc',
      'auth.trustedArcSealers[0]: expected a domain name, got "lists example"',
      'dns.servers[0]: expected an IP address, optionally with a port (10.0.0.53:5353, [::1]:5353)',
      'dns.servers[1]: expected an IP address, optionally with a port (10.0.0.53:5353, [::1]:5353)',
      'dns.timeout: expected an integer from 100 to 60000',
      'workspaces[0].senderAuthentication: expected one of off, aligned, dmarc',
    ]);
  });
});

describe('isDnsServerAddress', () => {
  it.each([
    ['10.0.0.53', true],
    ['10.0.0.53:5353', true],
    ['::1', true],
    ['[::1]:5353', true],
    ['[2001:db8::53]', true],
    ['resolver.example', false],
    ['resolver.example:53', false],
    ['10.0.0.53:0', false],
    ['10.0.0.53:65536', false],
    ['[10.0.0.53]:53', false],
    ['::1:5353x', false],
    ['', false],
  ])('%j → %s', (text, valid) => {
    expect(isDnsServerAddress(text)).toBe(valid);
  });
});

describe('lookupErrorCode', () => {
  it.each([
    [{ code: 'ENOTFOUND' }, 'ENOTFOUND'],
    [{ code: 'ENONAME' }, 'ENOTFOUND'],
    [{ code: 'ENODATA' }, 'ENODATA'],
    [{ code: 'EBADNAME' }, 'EBADNAME'],
    [{ code: 'ESERVFAIL' }, 'ESERVFAIL'],
    [{ code: 'ETIMEOUT' }, 'ETIMEOUT'],
    [{ code: 'ECONNREFUSED' }, 'ECONNREFUSED'],
    [new Error('no code'), 'ESERVFAIL'],
    ['a string', 'ESERVFAIL'],
  ])('%j → %s', (error, code) => {
    expect(lookupErrorCode(error)).toBe(code);
  });
});

describe('sender authentication replies', () => {
  it.each([
    ['SENDER_NOT_AUTHENTICATED', 550, '5.7.1'],
    ['SENDER_AUTHENTICATION_TEMPFAIL', 451, '4.7.0'],
  ] as const)('%s → %i %s with the reason', (code, responseCode, enhanced) => {
    expect(replyFor(new RefusalError(code, 'the reason'))).toEqual({
      responseCode,
      message: `${enhanced} the reason`,
      internal: false,
    });
  });
});
