import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const CLI = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));
const FIXTURE = fileURLToPath(new URL('../fixtures/workspaces.yaml', import.meta.url));
const API_KEY = 'command-test-key';

interface Running {
  child: ChildProcess;
  url: string;
  exited: Promise<number | null>;
}

/** The `mock-parsing-api` command on a free port; resolves once its log names the URL. */
async function startCommand(args: readonly string[]): Promise<Running> {
  const child = spawn(process.execPath, [CLI, '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PARSER_API_KEY: API_KEY, LOG_LEVEL: 'info' },
  });
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const lines: string[] = [];
  const stdout = child.stdout;
  if (!stdout) throw new Error('no stdout');
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: stdout }).on('line', (line) => {
      lines.push(line);
      const entry = JSON.parse(line) as { url?: string };
      if (entry.url) resolve(entry.url);
    });
    void exited.then(() => reject(new Error(`the command exited before listening:\n${lines.join('\n')}`)));
  });
  return { child, url, exited };
}

/** The command run to its end; resolves with its exit code and standard error. */
async function runCommand(args: readonly string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [CLI, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PARSER_API_KEY: '', ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const [code] = await once(child, 'exit');
  return { code: code as number | null, stdout, stderr };
}

describe('the mock-parsing-api command', () => {
  it('serves the fixture workspaces and the list settings given, and stops on SIGTERM with 0', async () => {
    const running = await startCommand(['--workspaces', FIXTURE, '--list-items', 'meta']);
    try {
      const workspace = await fetch(`${running.url}/v3/workspaces/ws-invoices`, {
        headers: { authorization: `Bearer ${API_KEY}` },
      });
      expect(workspace.status).toBe(200);
      expect(await workspace.json()).toMatchObject({ identifier: 'ws-invoices', name: 'Invoices' });
      const unauthorized = await fetch(`${running.url}/v3/workspaces/ws-invoices`);
      expect(unauthorized.status).toBe(401);
      const settings = await fetch(`${running.url}/_mock/settings`);
      expect(await settings.json()).toEqual({
        documentList: { items: 'meta', pageSize: null },
        organizationLists: { shape: 'page', pageSize: null },
      });
      const types = await fetch(`${running.url}/v3/document_types?organization=acme-org`, {
        headers: { authorization: `Bearer ${API_KEY}` },
      });
      expect(await types.json()).toMatchObject({
        count: 1,
        results: [{ identifier: 'doc-invoice', ingestEmail: 'acme-invoices-type-1c2d@ingest.example.com' }],
      });
    } finally {
      running.child.kill('SIGTERM');
    }
    expect(await running.exited).toBe(0);
  });

  it('exits 2 naming the problem when no key is given', async () => {
    const run = await runCommand([]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--api-key KEY or PARSER_API_KEY');
  });

  it('exits 2 naming the file when the workspace fixture is unreadable', async () => {
    const run = await runCommand(['--workspaces', '/nonexistent/ws.yaml'], { PARSER_API_KEY: API_KEY });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('cannot read the workspace fixture /nonexistent/ws.yaml');
  });

  it('prints its help and exits 0', async () => {
    const run = await runCommand(['--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Usage: mock-parsing-api [options]');
  });
});
