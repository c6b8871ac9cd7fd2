import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createMockApi, loadWorkspaceFixture, type MockApi } from '@ingest-gateway/mock-parsing-api';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli as runCliProcess } from '../../harness/cli-process.ts';
import { testConfigFile } from '../../harness/test-config.ts';
import { createLogger } from '../../src/logger.ts';
import { createWorkspaceClient } from '../../src/parsing-api/workspace-client.ts';

/**
 * The real CLI in a child process, with the project's Node (process.execPath), to prove the
 * wiring of src/cli.ts: argv to the workspace commands and their exit codes, and the
 * mock-api command's --workspaces and --config.
 */

const API_KEY = 'cli-workspace-key-61a0';
const FIXTURE = 'test/fixtures/workspaces/workspaces.yaml';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runCli(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['src/cli.ts', ...args],
      { env: { ...process.env, ...env } },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

describe('ingest-gateway workspace', () => {
  let mock: MockApi;
  let env: Record<string, string>;

  beforeEach(async () => {
    mock = createMockApi({
      apiKey: API_KEY,
      logger: createLogger({ level: 'silent' }),
      workspaces: await loadWorkspaceFixture(FIXTURE),
    });
    const { url } = await mock.start({ host: '127.0.0.1', port: 0 });
    // The service from the environment, as with the committed (mock-mode) config/gateway.yaml.
    env = { PARSER_API_URL: url, PARSER_API_KEY: API_KEY };
  });

  afterEach(async () => {
    await mock.close();
  });

  it('get prints the Workspace as JSON and exits 0', async () => {
    const run = await runCli(['workspace', 'get', 'ws-invoices'], env);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      identifier: 'ws-invoices',
      ingestEmail: 'acme-invoices-7f3a@ingest.example.com',
      organization: { identifier: 'acme-org', resthookSignatureKey: '[redacted]' },
    });
  });

  it('update sends the options and exits 0', async () => {
    const run = await runCli(
      ['workspace', 'update', 'ws-resumes', '--whitelist', '*@cv.example', '--reject-duplicates', 'null'],
      env,
    );
    expect(run.code).toBe(0);
    expect(mock.workspaces.requests.map((request) => request.body)).toEqual([
      { whitelistIngestAddresses: ['*@cv.example'], rejectDuplicates: null },
    ]);
  });

  it.each([
    { args: ['workspace', 'update', 'ws-invoices', '--visibility', 'public'], message: '--visibility' },
    {
      args: ['workspace', 'update', 'ws-invoices', '--nmae', 'x'],
      message: "unknown option '--nmae' (did you mean --name?)",
    },
  ])('$args exits 2 with "$message", nothing sent', async ({ args, message }) => {
    const run = await runCli(args, env);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
    expect(mock.workspaces.requests).toEqual([]);
  });

  it('exits 1 with the detail when the service refuses', async () => {
    const run = await runCli(['workspace', 'get', 'nope'], env);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('404: Not found.');
  });

  it.each([
    { terminal: true, shown: true },
    { terminal: false, shown: false },
  ])('sync shows its progress only on a terminal (terminal: $terminal)', async ({ terminal, shown }) => {
    const directory = await mkdtemp(join(tmpdir(), 'workspace-sync-'));
    try {
      const configPath = join(directory, 'gateway.yaml');
      await writeFile(
        configPath,
        `api:\n  baseUrl: ${env.PARSER_API_URL}\n  apiKey: ${API_KEY}\nworkspaces:\n` +
          '  - identifier: ws-invoices\n    ingestEmail: acme-invoices-7f3a@ingest.example.com\n' +
          '  - identifier: ws-resumes\n    ingestEmail: resumes@ingest.example\n',
      );
      const run = await runCliProcess(['workspace', 'sync', '--config', configPath], { env, terminal });
      // On a terminal stderr and stdout are the same pseudo-terminal, so both arrive in stdout.
      const output = run.stdout + run.stderr;
      expect(output).toContain('0 in sync, 2 different, 0 not read from the service');
      expect(output.includes('\r\u001b[2Kreading workspaces from the service: 2/2')).toBe(shown);
      expect(output.includes('\r')).toBe(shown);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('refuses the mock-mode configuration without PARSER_API_URL', async () => {
    const run = await runCli(['workspace', 'get', 'ws-invoices', '--config', 'config/gateway.yaml'], {
      PARSER_API_URL: '',
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('no parsing service to manage');
  });
});

describe('ingest-gateway mock-api --workspaces --config', () => {
  let directory: string;
  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'workspace-cli-'));
  });
  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('serves the fixture workspaces and the configured ones the fixture lacks', async () => {
    const configPath = join(directory, 'gateway.yaml');
    await writeFile(
      configPath,
      testConfigFile({
        workspaces: [
          { identifier: 'ws-invoices', ingestEmail: 'not-this@ingest.example' },
          {
            identifier: 'ws-extra',
            ingestEmail: 'extra@ingest.example',
            whitelistIngestAddresses: ['*@x.example'],
          },
        ],
      }).text,
    );
    const mock = await spawnMockApi(['--workspaces', FIXTURE, '--config', configPath]);
    try {
      const url = mock.url;
      const client = createWorkspaceClient({ baseUrl: url, apiKey: API_KEY, timeoutMs: 10_000 });
      try {
        expect(await client.getWorkspace('ws-invoices')).toMatchObject({
          ingestEmail: 'acme-invoices-7f3a@ingest.example.com',
        });
        expect(await client.getWorkspace('ws-extra')).toMatchObject({
          ingestEmail: 'extra@ingest.example',
          whitelistIngestAddresses: ['*@x.example'],
        });
      } finally {
        await client.close();
      }
    } finally {
      await mock.stop();
    }
  });

  it('answers the document list in the shape --list-items and --list-page-size say', async () => {
    const mock = await spawnMockApi(['--list-items', 'meta', '--list-page-size', '2']);
    try {
      const response = await fetch(`${mock.url}/_mock/settings`);
      expect(await response.json()).toEqual({
        documentList: { items: 'meta', pageSize: 2 },
        organizationLists: { shape: 'page', pageSize: null },
      });
    } finally {
      await mock.stop();
    }
  });
});

/** `ingest-gateway mock-api` on a free port, with these options besides the key. */
async function spawnMockApi(args: readonly string[]): Promise<{ url: string; stop(): Promise<void> }> {
  const child = spawn(
    process.execPath,
    ['src/cli.ts', 'mock-api', '--port', '0', '--api-key', API_KEY, ...args],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, LOG_LEVEL: 'info' },
    },
  );
  const exited = once(child, 'exit');
  const stop = async () => {
    child.kill('SIGTERM');
    await exited;
  };
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const lines: string[] = [];
      const stdout = child.stdout;
      if (!stdout) return reject(new Error('no stdout'));
      createInterface({ input: stdout }).on('line', (line) => {
        lines.push(line);
        const entry = JSON.parse(line) as { url?: string };
        if (entry.url) resolve(entry.url);
      });
      void exited.then(() => reject(new Error(`mock-api exited before listening:\n${lines.join('\n')}`)));
    });
    return { url, stop };
  } catch (caught) {
    await stop();
    throw caught;
  }
}
