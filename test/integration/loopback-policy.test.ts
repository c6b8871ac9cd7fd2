import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMockApi, type MockApi } from '@ingest-gateway/mock-parsing-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load-config.ts';
import { createLogger } from '../../src/logger.ts';
import { createApiTransport } from '../../src/parsing-api/api-transport.ts';
import { createParsingApiClient } from '../../src/parsing-api/parsing-api-client.ts';

/**
 * `check-config` and `start` apply one base-URL policy (src/parsing-api/base-url-policy.ts):
 * a configuration the check passes builds a transport, and one it refuses does not. And a
 * `*.localhost` base URL, which both count as loopback, really stays on this machine.
 */

const API_KEY = 'loopback-policy-key-5d1c';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'loopback-policy-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function writeConfig(name: string, baseUrl: string, allowInsecureHttp: boolean): Promise<string> {
  const path = join(dir, `${name}.yaml`);
  await writeFile(
    path,
    `api:\n  baseUrl: "${baseUrl}"\n  apiKey: k\n  allowInsecureHttp: ${allowInsecureHttp}\n` +
      'workspaces:\n  - identifier: ws-1\n    ingestEmail: in@ingest.example\n',
  );
  return path;
}

/** What `check-config` decides: the problems of the api.baseUrl, [] when it passes. */
async function checkConfigProblems(path: string): Promise<readonly string[]> {
  try {
    await loadConfig({ path, env: {} });
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

/** What `start` decides: whether the transport to that base URL can be built. */
async function transportAccepts(baseUrl: string, allowInsecureHttp: boolean): Promise<boolean> {
  try {
    const transport = createApiTransport({ baseUrl, apiKey: API_KEY, timeoutMs: 1000, allowInsecureHttp });
    await transport.close();
    return true;
  } catch {
    return false;
  }
}

describe('check-config and the transport agree', () => {
  it.each([
    { baseUrl: 'http://app.localhost:8026', allowInsecureHttp: false, accepted: true },
    { baseUrl: 'http://localhost:8026', allowInsecureHttp: false, accepted: true },
    { baseUrl: 'http://127.0.0.2:8026', allowInsecureHttp: false, accepted: true },
    { baseUrl: 'http://[::1]:8026', allowInsecureHttp: false, accepted: true },
    { baseUrl: 'https://api.eu1.example.com', allowInsecureHttp: false, accepted: true },
    { baseUrl: 'http://api.eu1.example.com', allowInsecureHttp: false, accepted: false },
    { baseUrl: 'http://app.localhost.example.com', allowInsecureHttp: false, accepted: false },
    { baseUrl: 'http://[::ffff:127.0.0.1]:8026', allowInsecureHttp: false, accepted: false },
    { baseUrl: 'http://mock-api:8026', allowInsecureHttp: false, accepted: false },
    { baseUrl: 'http://mock-api:8026', allowInsecureHttp: true, accepted: true },
  ])(
    '$baseUrl (allowInsecureHttp $allowInsecureHttp): accepted $accepted',
    async ({ baseUrl, allowInsecureHttp, accepted }) => {
      const path = await writeConfig(`c${Math.random().toString(36).slice(2)}`, baseUrl, allowInsecureHttp);
      const problems = await checkConfigProblems(path);
      expect(problems).toEqual(
        accepted ? [] : [expect.stringMatching(/^api\.baseUrl: http: would send the API key in clear/)],
      );
      expect(await transportAccepts(baseUrl, allowInsecureHttp)).toBe(accepted);
    },
  );

  it('`check-config` on the command line passes http://app.localhost:8026, as the transport does', async () => {
    const path = await writeConfig('app-localhost', 'http://app.localhost:8026', false);
    const run = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      execFile(
        process.execPath,
        ['src/cli.ts', 'check-config', '--config', path],
        { env: { PATH: process.env.PATH ?? '' } },
        (error, stdout) => resolve({ code: error === null ? 0 : (error.code as number | null), stdout }),
      );
    });
    expect(run).toMatchObject({ code: 0, stdout: expect.stringContaining(': valid') });
    expect(run.stdout).toContain('baseUrl: http://app.localhost:8026');
    expect(await transportAccepts('http://app.localhost:8026', false)).toBe(true);
  });
});

describe('a *.localhost base URL', () => {
  let mock: MockApi;
  let port: number;

  beforeAll(async () => {
    mock = createMockApi({ apiKey: API_KEY, logger: createLogger({ level: 'silent' }) });
    port = Number(new URL((await mock.start({ host: '127.0.0.1', port: 0 })).url).port);
  });

  afterAll(async () => {
    await mock.close();
  });

  it('reaches the service on this machine, resolved as localhost rather than by DNS', async () => {
    const client = createParsingApiClient({
      baseUrl: `http://app.localhost:${port}`,
      apiKey: API_KEY,
      timeoutMs: 10_000,
      logger: createLogger({ level: 'silent' }),
    });
    try {
      const result = await client.getDocument('no-such-document');
      expect(result).toMatchObject({ kind: 'response', status: 404 });
    } finally {
      await client.close();
    }
  });
});
