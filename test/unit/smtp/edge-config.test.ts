import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../../src/config/load-config.ts';
import { redactConfig } from '../../../src/config/redact-config.ts';

/** The SMTP edge's and the HTTP API's settings as the configuration reads them. */
const workspaces = `
workspaces:
  - identifier: ws-1
    ingestEmail: in@ingest.example
api:
  mock: true
`;

function parse(text: string, env: Record<string, string> = {}) {
  return parseConfig({ text: `${text}\n${workspaces}`, env, source: 'inline' });
}

function problemsOf(text: string, env: Record<string, string> = {}): readonly string[] {
  try {
    parse(text, env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('smtp edge settings', () => {
  it('reads every limit', () => {
    const config = parse(`
smtp:
  maxClients: 5
  maxRecipients: 3
  sessionTimeout: 120000
  refusedRecipientDelayAfter: 5
  refusedRecipientDelay: 2000
  maxRefusedRecipients: 50
  refusedRecipientWindow: 600000
  rateLimit: { window: 10000, connectionsPerIp: 1, messagesPerIp: 2, messagesPerSender: 0, exempt: [] }
  tls: { key: /etc/key.pem, cert: /etc/cert.pem }
  requireTls: true
  proxyProtocolFrom: [10.0.0.0/8, "2001:db8::7"]
  rejectBareLineEndings: false
`);
    expect(config.smtp).toMatchObject({
      maxClients: 5,
      maxRecipients: 3,
      sessionTimeout: 120_000,
      refusedRecipientDelayAfter: 5,
      refusedRecipientDelay: 2000,
      maxRefusedRecipients: 50,
      refusedRecipientWindow: 600_000,
      rateLimit: { window: 10_000, connectionsPerIp: 1, messagesPerIp: 2, messagesPerSender: 0, exempt: [] },
      tls: { key: '/etc/key.pem', cert: '/etc/cert.pem' },
      requireTls: true,
      proxyProtocolFrom: ['10.0.0.0/8', '2001:db8::7'],
      rejectBareLineEndings: false,
    });
  });

  it.each([
    ['requireTls without a certificate', 'smtp:\n  requireTls: true', /^smtp\.requireTls: needs smtp\.tls/],
    [
      'a host name as a load balancer',
      'smtp:\n  proxyProtocolFrom: [lb.example]',
      /^smtp\.proxyProtocolFrom\[0\]: expected an IP address or a CIDR block/,
    ],
    [
      'a prefix past /32',
      'smtp:\n  rateLimit:\n    exempt: [10.0.0.0/40]',
      /^smtp\.rateLimit\.exempt\[0\]: expected an IP address/,
    ],
    [
      'a negative rate',
      'smtp:\n  rateLimit:\n    connectionsPerIp: -1',
      /^smtp\.rateLimit\.connectionsPerIp: expected an integer/,
    ],
    ['a certificate without a key', 'smtp:\n  tls: { cert: /etc/cert.pem }', /^smtp\.tls\.key: /],
    [
      'a session deadline under a second',
      'smtp:\n  sessionTimeout: 10',
      /^smtp\.sessionTimeout: expected an integer from 1000/,
    ],
    [
      'no delay before the disconnect',
      'smtp:\n  refusedRecipientDelayAfter: 20\n  maxRefusedRecipients: 20',
      /^smtp\.refusedRecipientDelayAfter: must be less than smtp\.maxRefusedRecipients \(20\)/,
    ],
    [
      'a refused-recipient window under a second',
      'smtp:\n  refusedRecipientWindow: 10',
      /^smtp\.refusedRecipientWindow: expected an integer from 1000/,
    ],
    [
      'no room for a recipient',
      'smtp:\n  maxRecipients: 0',
      /^smtp\.maxRecipients: expected an integer from 1/,
    ],
  ])('reports %s', (_case, text, problem) => {
    expect(problemsOf(text)).toEqual([expect.stringMatching(problem)]);
  });
});

describe('http.token', () => {
  it.each(['127.0.0.1', 'localhost', '::1', '127.0.0.2'])('is optional on loopback (%s)', (host) => {
    expect(problemsOf(`http:\n  host: "${host}"`)).toEqual([]);
  });

  it.each(['0.0.0.0', '10.1.2.3', '::', 'api.internal'])('is required on %s', (host) => {
    expect(problemsOf(`http:\n  host: "${host}"`)).toEqual([
      `http.token: is required when host is ${host} (not loopback): the API serves stored e-mails; set HTTP_TOKEN`,
    ]);
  });

  it('comes from HTTP_TOKEN', () => {
    const config = parse('http:\n  host: 0.0.0.0', { HTTP_TOKEN: 'token-from-the-environment' });
    expect(config.http.token).toBe('token-from-the-environment');
  });

  it('must be long enough to guess at no better than chance', () => {
    expect(problemsOf('http:\n  host: 0.0.0.0\n  token: short')).toEqual([
      'http.token: must be at least 16 characters',
    ]);
  });

  it('is redacted when the configuration is printed', () => {
    const config = parse('http:\n  host: 0.0.0.0\n  token: a-long-enough-http-token');
    expect(JSON.stringify(redactConfig(config))).not.toContain('a-long-enough-http-token');
    expect(redactConfig(config).http.token).toBe('[redacted]');
  });
});
