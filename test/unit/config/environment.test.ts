// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the ${VAR} syntax is what these strings test.
import { describe, expect, it } from 'vitest';
import type { Env } from '../../../src/config/interpolate-env.ts';
import { ConfigError, parseConfig } from '../../../src/config/load-config.ts';
import type { GatewayConfig } from '../../../src/config/schema.ts';

/** `${VAR}` interpolation and the env overrides, through the whole load. */

const WORKSPACE = `workspaces:
  - identifier: ws-1
    ingestEmail: in@ingest.example
`;
const MOCK = `api:\n  mock: true\n${WORKSPACE}`;

function parse(text: string, env: Env): GatewayConfig {
  return parseConfig({ text, env, source: 'inline' });
}

function problemsOf(text: string, env: Env): readonly string[] {
  try {
    parse(text, env);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

describe('${VAR} interpolation', () => {
  it.each([
    { value: '${HOST}', env: { HOST: 'mx.example.com' }, hostname: 'mx.example.com' },
    { value: 'mx.${DOMAIN}', env: { DOMAIN: 'example.com' }, hostname: 'mx.example.com' },
    { value: '${HOST:-fallback.example}', env: {}, hostname: 'fallback.example' },
    { value: '${HOST:-fallback.example}', env: { HOST: '' }, hostname: 'fallback.example' },
    { value: '${HOST:-fallback.example}', env: { HOST: 'set.example' }, hostname: 'set.example' },
    { value: '"a$${HOST}"', env: { HOST: 'x' }, hostname: 'a${HOST}' },
    { value: '"$$${HOST}"', env: { HOST: 'x' }, hostname: '$${HOST}' },
    { value: 'cost$5', env: {}, hostname: 'cost$5' },
  ])('smtp.hostname: $value with $env → $hostname', ({ value, env, hostname }) => {
    expect(parse(`smtp:\n  hostname: ${value}\n${MOCK}`, env).smtp.hostname).toBe(hostname);
  });

  it('reports an unset variable with the path of the value that needs it', () => {
    expect(problemsOf(`smtp:\n  hostname: \${MX_NAME}\n${MOCK}`, {})).toEqual([
      'smtp.hostname: environment variable MX_NAME is not set (write ${MX_NAME:-default} to give a default)',
    ]);
  });

  it('reports every unset variable, in lists too, and nothing else about those values', () => {
    const text = `smtp:\n  port: \${PORT}\napi: {mock: true}
workspaces:
  - identifier: \${WS_ID}
    ingestEmail: in@ingest.example
    whitelistIngestAddresses: ["*@acme.example", "\${PARTNER}"]
`;
    expect(problemsOf(text, {})).toEqual([
      expect.stringMatching(/^smtp\.port: environment variable PORT is not set/),
      expect.stringMatching(/^workspaces\[0\]\.identifier: environment variable WS_ID is not set/),
      expect.stringMatching(
        /^workspaces\[0\]\.whitelistIngestAddresses\[1\]: environment variable PARTNER is not set/,
      ),
    ]);
  });

  it.each([
    { value: '"${}"', problem: 'is not a reference' },
    { value: '"${1X}"', problem: 'is not a reference' },
    { value: '"${X-default}"', problem: 'is not a reference' },
    { value: '"${X"', problem: 'is not closed' },
  ])('reports the malformed reference $value', ({ value, problem }) => {
    const problems = problemsOf(`smtp:\n  hostname: ${value}\n${MOCK}`, { X: 'x' });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(new RegExp(`^smtp\\.hostname: .*${problem}`));
  });

  it.each([
    { value: '${N}', env: { N: '2600' }, port: 2600 },
    { value: '${N:-2601}', env: {}, port: 2601 },
  ])('a plain scalar that becomes a number is one: $value', ({ value, env, port }) => {
    expect(parse(`smtp:\n  port: ${value}\n${MOCK}`, env).smtp.port).toBe(port);
  });

  it('a plain scalar that becomes true is a boolean', () => {
    expect(parse(`api:\n  mock: \${MOCK:-true}\n${WORKSPACE}`, {}).api.mock).toBe(true);
  });

  it('a quoted scalar stays a string, as written', () => {
    expect(problemsOf(`smtp:\n  port: "\${N}"\n${MOCK}`, { N: '2600' })).toEqual([
      'smtp.port: expected an integer from 0 to 65535',
    ]);
  });

  it('does not interpolate keys', () => {
    expect(problemsOf(`smtp:\n  \${KEY}: 1\n${MOCK}`, { KEY: 'port' })).toEqual([
      expect.stringMatching(/^smtp\.\$\{KEY\}: unknown key/),
    ]);
  });
});

describe('environment overrides', () => {
  const LIVE = `api:\n  baseUrl: https://file.example.com\n  apiKey: \${PARSER_API_KEY}\n${WORKSPACE}`;

  it.each([
    { variable: 'SMTP_PORT', value: '2600', read: (c: GatewayConfig) => c.smtp.port, expected: 2600 },
    { variable: 'HTTP_PORT', value: '0', read: (c: GatewayConfig) => c.http.port, expected: 0 },
    {
      variable: 'REDIS_URL',
      value: 'redis://r:6380',
      read: (c: GatewayConfig) => c.redis.url,
      expected: 'redis://r:6380',
    },
    {
      variable: 'PARSER_API_URL',
      value: 'https://env.example.com',
      read: (c: GatewayConfig) => c.api.baseUrl,
      expected: 'https://env.example.com',
    },
    {
      variable: 'PARSER_API_KEY',
      value: 'env-key',
      read: (c: GatewayConfig) => c.api.apiKey,
      expected: 'env-key',
    },
    { variable: 'LOG_LEVEL', value: 'debug', read: (c: GatewayConfig) => c.log.level, expected: 'debug' },
    {
      variable: 'SMTP_HOSTNAME',
      value: 'mx1.example.com',
      read: (c: GatewayConfig) => c.smtp.hostname,
      expected: 'mx1.example.com',
    },
    {
      variable: 'PUBLIC_URL',
      value: 'https://ingest.example.com/gateway',
      read: (c: GatewayConfig) => c.http.publicUrl,
      expected: 'https://ingest.example.com/gateway',
    },
  ])('$variable overrides the file', ({ variable, value, read, expected }) => {
    const text = `smtp: {port: 25, hostname: mx.file.example}\nhttp: {port: 80, publicUrl: "https://file.example.com"}\nredis: {url: "redis://file:6379"}\nlog: {level: warn}\n${LIVE}`;
    const env = { PARSER_API_KEY: 'file-key', [variable]: value };
    expect(read(parse(text, env))).toEqual(expected);
  });

  it('leaves the file value when the variable is empty', () => {
    expect(parse(`smtp: {port: 25}\n${MOCK}`, { SMTP_PORT: '' }).smtp.port).toBe(25);
  });

  it('creates the section it overrides', () => {
    expect(parse(WORKSPACE, { PARSER_API_URL: 'https://env.example.com', PARSER_API_KEY: 'k' }).api).toEqual({
      baseUrl: 'https://env.example.com',
      apiKey: 'k',
      mock: false,
      allowInsecureHttp: false,
      timeout: 60_000,
    });
  });

  it.each([
    {
      variable: 'SMTP_PORT',
      value: 'abc',
      problem: 'SMTP_PORT: expected an integer from 0 to 65535, got "abc"',
    },
    {
      variable: 'SMTP_PORT',
      value: '25 ',
      problem: 'SMTP_PORT: expected an integer from 0 to 65535, got "25 "',
    },
    {
      variable: 'HTTP_PORT',
      value: '-1',
      problem: 'HTTP_PORT: expected an integer from 0 to 65535, got "-1"',
    },
    { variable: 'SMTP_PORT', value: '70000', problem: 'smtp.port: expected an integer from 0 to 65535' },
    {
      variable: 'LOG_LEVEL',
      value: 'verbose',
      problem: 'log.level: expected one of fatal, error, warn, info, debug, trace, silent',
    },
    {
      variable: 'REDIS_URL',
      value: 'localhost:6379',
      problem: 'redis.url: expected a redis:// or rediss:// URL',
    },
    {
      variable: 'PARSER_API_URL',
      value: 'http://api.example.com',
      problem: 'api.baseUrl: http: would send the API key in clear',
    },
    {
      variable: 'PUBLIC_URL',
      value: 'ingest.example.com',
      problem: 'http.publicUrl: expected an http(s) URL, got "ingest.example.com"',
    },
  ])('$variable=$value is a problem', ({ variable, value, problem }) => {
    const problems = problemsOf(MOCK, { [variable]: value });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(problem);
  });

  it('an override replaces a value whose own variable is unset, without a problem', () => {
    expect(
      parse(`api:\n  baseUrl: https://a.example\n  apiKey: \${MY_KEY}\n${WORKSPACE}`, { PARSER_API_KEY: 'k' })
        .api.apiKey,
    ).toBe('k');
  });

  it('without PARSER_API_KEY, the example key reference is one problem, not two', () => {
    expect(problemsOf(LIVE, {})).toEqual([
      expect.stringMatching(/^api\.apiKey: environment variable PARSER_API_KEY is not set/),
    ]);
  });
});

describe('secrets in problems', () => {
  it.each([
    ['api.apiKey', 'api:\n  baseUrl: https://api.example.com\n  apiKey: ${SECRET}\n'],
    ['http.token', 'api:\n  mock: true\nhttp:\n  token: ${SECRET}\n'],
  ])('never prints %s back, even when an all-digit variable makes it a number', (_path, yaml) => {
    const text = `${yaml}workspaces:\n  - identifier: ws-1\n    ingestEmail: in@ingest.example\n`;
    let problems: readonly string[] = [];
    try {
      parseConfig({ text, env: { SECRET: '98765432109876' }, source: 'inline' });
    } catch (err) {
      if (err instanceof ConfigError) problems = err.problems;
    }
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.join('\n')).not.toContain('98765432109876');
    expect(problems.join('\n')).toContain('(not shown)');
  });
});
