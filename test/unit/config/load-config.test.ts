import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Env } from '../../../src/config/interpolate-env.ts';
import { ConfigError, loadConfig, parseConfig } from '../../../src/config/load-config.ts';
import type { GatewayConfig } from '../../../src/config/schema.ts';

const fixture = (name: string) => fileURLToPath(new URL(`../../fixtures/config/${name}`, import.meta.url));

const WORKSPACE = `workspaces:
  - identifier: ws-1
    ingestEmail: in@ingest.example
`;
const MOCK = `api:\n  mock: true\n${WORKSPACE}`;
const LIVE = `api:\n  baseUrl: https://api.eu1.example.com\n  apiKey: key\n${WORKSPACE}`;

function parse(text: string, env: Env = {}): GatewayConfig {
  return parseConfig({ text, env, source: 'inline' });
}

/** The problems a configuration has; [] when it loads. */
function problemsOf(text: string, env: Env = {}): readonly string[] {
  try {
    parse(text, env);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

describe('loadConfig', () => {
  it('fills every default around the least a file must say', async () => {
    const config = await loadConfig({ path: fixture('minimal.yaml'), env: {} });
    expect(config).toEqual({
      smtp: {
        host: '::',
        port: 2525,
        hostname: 'localhost',
        maxMessageSize: 26_214_400,
        maxAttachments: 10,
        maxPartSize: 20_000_000,
        maxMimeDepth: 3,
        maxParts: 100,
        socketTimeout: 60_000,
        greetingDelay: 100,
        closeTimeout: 30_000,
        maxClients: 100,
        maxRecipients: 100,
        sessionTimeout: 600_000,
        refusedRecipientDelayAfter: 3,
        refusedRecipientDelay: 1000,
        maxRefusedRecipients: 20,
        refusedRecipientWindow: 3_600_000,
        rateLimit: {
          window: 60_000,
          connectionsPerIp: 300,
          messagesPerIp: 600,
          messagesPerSender: 120,
          exempt: ['127.0.0.0/8', '::1/128'],
        },
        requireTls: false,
        proxyProtocolFrom: [],
        rejectBareLineEndings: true,
        subaddressSeparator: '+',
      },
      redis: {
        url: 'redis://127.0.0.1:6379',
        prefix: 'ingest',
        sentinels: [],
        sentinelName: 'mymaster',
        cluster: [],
        startLocal: false,
        allowEviction: false,
        waitAof: false,
        waitAofTimeout: 2000,
      },
      retention: {
        messages: 2_592_000,
        held: 1_209_600,
        refusals: 604_800,
        maxRefusals: 20_000,
        completedJobs: 604_800,
        failedJobs: 2_592_000,
      },
      api: { mock: true, allowInsecureHttp: false, timeout: 60_000 },
      upload: {
        concurrency: 8,
        attempts: 15,
        retryBaseDelay: 1000,
        retryMaxDelay: 600_000,
        promoteAfterRecovery: true,
        stalledAfter: 30_000,
        maxStalls: 3,
        closeTimeout: 30_000,
      },
      http: { host: '127.0.0.1', port: 8025, allowReset: false },
      log: { level: 'info' },
      scan: { unavailable: 'tempfail' },
      events: {
        webhooks: [],
        retryBaseDelay: 10000,
        retryMaxDelay: 3600000,
        retryFor: 86400000,
        timeout: 10000,
      },
      notices: {
        envelopeFrom: '',
        retryBaseDelay: 30000,
        retryMaxDelay: 3600000,
        retryFor: 86400000,
        timeout: 30000,
      },
      auth: { senderAuthentication: 'off', trustedArcSealers: [] },
      dns: { servers: [], timeout: 5000, tries: 2 },
      workspaces: [
        {
          identifier: 'ws-1',
          ingestEmail: 'In@ingest.example',
          archives: 'skip',
          bodyAsDocument: 'never',
          encryptedPdf: 'skip',
          unlistedSenders: 'refuse',
        },
      ],
    });
  });

  it('lists every problem of a file at once, each with its path', async () => {
    const error = await loadConfig({ path: fixture('four-mistakes.yaml'), env: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    if (!(error instanceof ConfigError)) return;
    expect(error.problems).toEqual([
      'smtp.port: expected an integer from 0 to 65535',
      expect.stringMatching(/^smtp\.maxAttachmnets: unknown key; expected one of .*maxAttachments/),
      expect.stringMatching(/^api\.baseUrl: http: would send the API key in clear to api\.example\.com/),
      'workspaces[0].whitelistIngestAddresses[2]: allow-list rule "!*@evil.test" starts with "!": negation is not supported',
    ]);
    expect(error.source).toBe(fixture('four-mistakes.yaml'));
    for (const problem of error.problems) expect(error.message).toContain(problem);
    expect(error.message).toContain('4 problems');
  });

  it('reports a file it cannot read as a ConfigError', async () => {
    const path = fixture('does-not-exist.yaml');
    await expect(loadConfig({ path, env: {} })).rejects.toThrow(ConfigError);
    await expect(loadConfig({ path, env: {} })).rejects.toThrow(/cannot read the file: ENOENT/);
  });
});

describe('parseConfig', () => {
  it.each([
    { text: 'a: 1\na: 2\n', problem: 'line 2, column 1: Map keys must be unique' },
    { text: 'smtp:\n  port: [2525\n', problem: expect.stringMatching(/^line 3, column 1: /) },
    { text: 'smtp: @x\n', problem: 'line 1, column 7: Plain value cannot start with reserved character @' },
  ])('reports a YAML syntax error with its line and column: $text', ({ text, problem }) => {
    expect(problemsOf(text)).toEqual([problem]);
  });

  it.each([
    {
      label: 'an empty file',
      text: '',
      problems: ['api.baseUrl', 'api.apiKey', 'workspaces: expected at least one workspace'],
    },
    { label: 'a list', text: '- 1\n', problems: ['(root): expected an object, got a list'] },
    {
      label: 'no workspace',
      text: 'api: {mock: true}\nworkspaces: []\n',
      problems: ['workspaces: expected at least one'],
    },
    {
      label: 'a section of the wrong type',
      text: `smtp: 5\n${MOCK}`,
      problems: ['smtp: expected an object, got number 5'],
    },
    {
      label: 'a key of the wrong type',
      text: `smtp:\n  hostname: [a]\n${MOCK}`,
      problems: ['smtp.hostname: expected a string, got a list'],
    },
    {
      label: 'an unknown section',
      text: `smpt: {}\n${MOCK}`,
      problems: ['smpt: unknown key; expected one of smtp,'],
    },
    {
      label: 'an unknown workspace key',
      text: `${MOCK}    colection: c\n`,
      problems: ['workspaces[0].colection: unknown key; expected one of identifier,'],
    },
    {
      label: 'an unknown upload field',
      text: `${MOCK}    upload:\n      rejectDuplicate: true\n`,
      problems: [
        'workspaces[0].upload.rejectDuplicate: unknown key; expected one of wait, rejectDuplicates,',
      ],
    },
    {
      label: 'an upload field of the wrong type',
      text: `${MOCK}    upload:\n      useOcr: "yes"\n`,
      problems: ['workspaces[0].upload.useOcr: expected a boolean, got the string "yes"'],
    },
    {
      label: 'deleteAfterParse without wait',
      text: `${MOCK}    upload:\n      deleteAfterParse: true\n`,
      problems: ['workspaces[0].upload.deleteAfterParse: needs wait: true'],
    },
    {
      label: 'a bad ingest address',
      text: 'api: {mock: true}\nworkspaces:\n  - {identifier: w, ingestEmail: nobody}\n',
      problems: ['workspaces[0].ingestEmail: expected an e-mail address, got "nobody"'],
    },
    {
      label: 'a redis prefix with a hash tag',
      text: `redis: {prefix: "{x}"}\n${MOCK}`,
      problems: ['redis.prefix: expected letters'],
    },
    {
      label: 'a redis prefix with a colon',
      text: `redis: {prefix: "a:b"}\n${MOCK}`,
      problems: ['redis.prefix: expected letters'],
    },
    {
      label: 'a redis URL of another scheme',
      text: `redis: {url: "http://r"}\n${MOCK}`,
      problems: ['redis.url: expected a redis://'],
    },
    {
      label: 'an unknown log level',
      text: `log: {level: loud}\n${MOCK}`,
      problems: ['log.level: expected one of fatal, error'],
    },
    {
      label: 'concurrency 0',
      text: `upload: {concurrency: 0}\n${MOCK}`,
      problems: ['upload.concurrency: expected an integer from 1 to 256'],
    },
    {
      label: 'a fractional port',
      text: `http: {port: 80.5}\n${MOCK}`,
      problems: ['http.port: expected an integer from 0 to 65535'],
    },
  ])('reports $label', ({ text, problems }) => {
    const found = problemsOf(text);
    expect(found).toHaveLength(problems.length);
    for (const [index, problem] of problems.entries()) expect(found[index]).toContain(problem);
  });

  describe('api: mock mode is never implied', () => {
    it.each([
      { label: 'mock without baseUrl or key', api: '{mock: true}', problems: [] },
      { label: 'baseUrl and key', api: '{baseUrl: "https://api.eu1.example.com", apiKey: k}', problems: [] },
      {
        label: 'neither mock nor baseUrl',
        api: '{apiKey: k}',
        problems: ['api.baseUrl: is required unless api.mock is true; set it or PARSER_API_URL'],
      },
      {
        label: 'mock: false without baseUrl',
        api: '{mock: false, apiKey: k}',
        problems: ['api.baseUrl: is required unless api.mock is true; set it or PARSER_API_URL'],
      },
      {
        label: 'a baseUrl without a key',
        api: '{baseUrl: "https://api.eu1.example.com"}',
        problems: ['api.apiKey: is required unless api.mock is true; set PARSER_API_KEY or api.apiKeyFile'],
      },
      {
        label: 'an empty key',
        api: '{baseUrl: "https://api.eu1.example.com", apiKey: ""}',
        problems: ['api.apiKey: is required unless api.mock is true; set PARSER_API_KEY or api.apiKeyFile'],
      },
      {
        label: 'a baseUrl that is no URL',
        api: '{baseUrl: "api.example.com", apiKey: k}',
        problems: ['api.baseUrl: expected an http(s) URL, got "api.example.com"'],
      },
      {
        label: 'a baseUrl with credentials',
        api: '{baseUrl: "https://u:p@api.example.com", apiKey: k}',
        problems: ['api.baseUrl: must not hold credentials, a query or a fragment'],
      },
    ])('$label', ({ api, problems }) => {
      expect(problemsOf(`api: ${api}\n${WORKSPACE}`)).toEqual(problems);
    });

    it.each([
      ['http://localhost:4010', true],
      ['http://127.0.0.1:4010/', true],
      ['http://127.8.9.10', true],
      ['http://[::1]:4010', true],
      ['http://mock.localhost', true],
      ['https://api.eu1.example.com', true],
      ['http://api.eu1.example.com', false],
      ['http://10.0.0.5:4010', false],
      ['http://localhost.example.com', false],
      ['http://[::2]', false],
    ])('baseUrl %s accepted: %s', (baseUrl, accepted) => {
      const problems = problemsOf(`api: {baseUrl: "${baseUrl}", apiKey: k}\n${WORKSPACE}`);
      expect(problems).toEqual(
        accepted ? [] : [expect.stringMatching(/^api\.baseUrl: http: would send the API key in clear/)],
      );
    });

    it('takes http: to another host only with the explicit allowInsecureHttp', () => {
      const api = 'baseUrl: "http://mock-api:8026", apiKey: k';
      expect(problemsOf(`api: {${api}}\n${WORKSPACE}`)).toHaveLength(1);
      expect(problemsOf(`api: {${api}, allowInsecureHttp: true}\n${WORKSPACE}`)).toEqual([]);
    });

    it('keeps baseUrl without its trailing slash, so paths can be appended', () => {
      expect(
        parse(`api: {baseUrl: "https://api.example.com/eu1/", apiKey: k}\n${WORKSPACE}`).api.baseUrl,
      ).toBe('https://api.example.com/eu1');
    });
  });

  describe('redis.cluster', () => {
    const cluster = 'cluster: ["10.0.0.1:6379", "10.0.0.2:6379"]';
    it('takes seed nodes, with the user, password and TLS of the URL', () => {
      const redis = parse(`redis: {url: "rediss://app:secret@ignored", ${cluster}}\n${MOCK}`).redis;
      expect(redis.cluster).toEqual(['10.0.0.1:6379', '10.0.0.2:6379']);
    });

    it.each([
      {
        extra: 'sentinels: ["10.0.0.9:26379"]',
        problem: /^redis\.cluster: cannot be combined with redis\.sentinels/,
      },
      {
        extra: 'url: "redis://10.0.0.1:6379/2"',
        problem: /^redis\.url: names database 2, but a Redis Cluster has only database 0/,
      },
      { extra: 'startLocal: true', problem: /^redis\.startLocal: cannot be combined with redis\.cluster/ },
      { extra: 'cluster: ["10.0.0.1"]', problem: /^redis\.cluster\[0\]: expected host:port$/ },
    ])('refuses $extra beside it', ({ extra, problem }) => {
      const text = extra.startsWith('cluster') ? `redis: {${extra}}` : `redis: {${cluster}, ${extra}}`;
      expect(problemsOf(`${text}\n${MOCK}`)).toEqual([expect.stringMatching(problem)]);
    });
  });

  it('refuses two workspaces with the same ingest address, case and IDN aside', () => {
    const text = `api: {mock: true}
workspaces:
  - {identifier: a, ingestEmail: in@bücher.example}
  - {identifier: b, ingestEmail: other@bücher.example}
  - {identifier: c, ingestEmail: IN@XN--BCHER-KVA.example.}
`;
    expect(problemsOf(text)).toEqual([
      'workspaces[2].ingestEmail: IN@xn--bcher-kva.example is already the ingest address of workspaces[0]',
    ]);
  });

  it('shows a Redis URL written in place of the redis section without its password', () => {
    const text = `redis: "redis://gateway:s3cr3t-pw@cache:6379"\n${MOCK}`;
    expect(problemsOf(text)).toEqual([
      'redis: expected an object, got the string "redis://gateway:***@cache:6379"',
    ]);
  });

  it('reports a bad allow-list rule with its path', () => {
    const text = `${MOCK}    whitelistIngestAddresses: ["*@acme.example", "ap@partner.example", "*@{a,b}.example"]\n`;
    expect(problemsOf(text)).toEqual([
      expect.stringMatching(
        /^workspaces\[0\]\.whitelistIngestAddresses\[2\]: allow-list rule "\*@\{a,b\}\.example" holds a brace/,
      ),
    ]);
  });

  it('accepts an absent, null or empty allow-list', () => {
    for (const list of ['', '    whitelistIngestAddresses: null\n', '    whitelistIngestAddresses: []\n']) {
      expect(problemsOf(`${MOCK}${list}`)).toEqual([]);
    }
  });

  // Without publicUrl the gateway links to the address its HTTP API is bound to (known at start).
  it.each([
    { http: '{}', publicUrl: undefined },
    { http: '{host: "::1", port: 9000}', publicUrl: undefined },
    { http: '{publicUrl: "https://ingest.example.com/"}', publicUrl: 'https://ingest.example.com' },
  ])('http $http gives publicUrl $publicUrl', ({ http, publicUrl }) => {
    expect(parse(`http: ${http}\n${MOCK}`).http.publicUrl).toBe(publicUrl);
  });

  it('returns a deeply frozen configuration', () => {
    const config = parse(
      `${LIVE}    whitelistIngestAddresses: ["*@acme.example"]\n    upload: {language: en}\n`,
    );
    expect(Object.isFrozen(config)).toBe(true);
    expect(() => {
      (config.smtp as { port: number }).port = 25;
    }).toThrow(TypeError);
    const [workspace] = config.workspaces;
    if (workspace === undefined) throw new Error('no workspace');
    expect(() => (workspace.whitelistIngestAddresses as string[]).push('*@evil.test')).toThrow(TypeError);
    expect(() => Object.assign(workspace.upload ?? {}, { language: 'fr' })).toThrow(TypeError);
    expect(config.smtp.port).toBe(2525);
  });
});

describe('api.apiKeyFile', () => {
  const workspace = 'workspaces:\n  - identifier: ws-1\n    ingestEmail: in@ingest.example\n';
  it('stands in for apiKey, so a key from a secret file needs no PARSER_API_KEY', () => {
    const config = parseConfig({
      text: `api: {baseUrl: "https://api.example.com", apiKeyFile: /run/secrets/parser-api-key}\n${workspace}`,
      env: {},
      source: 'inline',
    });
    expect(config.api.apiKeyFile).toBe('/run/secrets/parser-api-key');
    expect(config.api.apiKey).toBeUndefined();
  });
});

/**
 * Where the listeners go when the file does not say: the HTTP API serves whole e-mails, so it
 * stays on loopback unless an operator names another host (and then must set a token); the
 * SMTP intake is the MX, so it listens on every interface.
 */
describe('listener defaults', () => {
  it('puts the HTTP API on 127.0.0.1:8025, without a token, when the file has no http section', () => {
    const { http } = parse(LIVE);
    expect(http).toEqual({ host: '127.0.0.1', port: 8025, allowReset: false });
    expect(http.token).toBeUndefined();
  });

  it('keeps 127.0.0.1 when http sets other keys, or HTTP_PORT and HTTP_TOKEN are set', () => {
    expect(parse(`http: {port: 0}\n${LIVE}`).http).toEqual({ host: '127.0.0.1', port: 0, allowReset: false });
    const token = 'http-token-of-16-chars';
    expect(parse(LIVE, { HTTP_PORT: '9000', HTTP_TOKEN: token }).http).toEqual({
      host: '127.0.0.1',
      port: 9000,
      token,
      allowReset: false,
    });
  });

  it('asks for a token only once http.host leaves loopback', () => {
    expect(problemsOf(`http: {host: 0.0.0.0}\n${LIVE}`)).toEqual([
      'http.token: is required when host is 0.0.0.0 (not loopback): the API serves stored e-mails; set HTTP_TOKEN',
    ]);
    expect(problemsOf(`http: {host: 0.0.0.0}\n${LIVE}`, { HTTP_TOKEN: 'http-token-of-16-chars' })).toEqual(
      [],
    );
  });

  it('puts the SMTP intake on [::]:2525 when the file has no smtp section', () => {
    const { smtp } = parse(LIVE);
    expect({ host: smtp.host, port: smtp.port }).toEqual({ host: '::', port: 2525 });
    expect(parse(LIVE, { SMTP_PORT: '25' }).smtp).toMatchObject({ host: '::', port: 25 });
  });
});
