import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createMockApi,
  loadWorkspaceFixture,
  type MockApi,
  type MockWorkspace,
  type WorkspaceSeed,
} from '@ingest-gateway/mock-parsing-api';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { getWorkspaceCommand } from '../../src/cli/workspace/get-workspace.ts';
import {
  runWorkspaceCommand,
  type WorkspaceCommandInput,
} from '../../src/cli/workspace/run-workspace-command.ts';
import { syncWorkspacesCommand } from '../../src/cli/workspace/sync-workspaces.ts';
import type { UpdateOptionValues } from '../../src/cli/workspace/update-options.ts';
import { updateWorkspaceCommand } from '../../src/cli/workspace/update-workspace.ts';
import { parseConfig } from '../../src/config/load-config.ts';
import { createLogger } from '../../src/logger.ts';
import { createWorkspaceClient, type WorkspaceClient } from '../../src/parsing-api/workspace-client.ts';

/**
 * The `workspace` commands, called as functions with a client pointed at the real mock over
 * real HTTP, their output captured. The mock records every workspace request, so "nothing
 * was sent" is asserted, not assumed.
 */

const API_KEY = 'workspace-commands-key-93f1';

class Buffered {
  text = '';
  write(chunk: string) {
    this.text += chunk;
    return true;
  }
}

let fixture: WorkspaceSeed[];
let mock: MockApi;
let url: string;
let client: WorkspaceClient;
let stdout: Buffered;
let stderr: Buffered;
let directory: string;

beforeAll(async () => {
  fixture = await loadWorkspaceFixture('test/fixtures/workspaces/workspaces.yaml');
  directory = await mkdtemp(join(tmpdir(), 'workspace-commands-'));
});

afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

beforeEach(async () => {
  mock = createMockApi({ apiKey: API_KEY, logger: createLogger({ level: 'silent' }), workspaces: fixture });
  ({ url } = await mock.start({ host: '127.0.0.1', port: 0 }));
  client = createWorkspaceClient({ baseUrl: url, apiKey: API_KEY, timeoutMs: 10_000 });
  stdout = new Buffered();
  stderr = new Buffered();
});

afterEach(async () => {
  await client.close();
  await mock.close();
});

const streams = () => ({ stdout, stderr });

/** A workspace as the commands print it: the signing secret replaced. */
function redacted(workspace: MockWorkspace | undefined) {
  if (workspace === undefined) throw new Error('no such workspace in the mock');
  return { ...workspace, organization: { ...workspace.organization, resthookSignatureKey: '[redacted]' } };
}

describe('workspace get', () => {
  it('prints the Workspace as JSON and exits 0', async () => {
    expect(await getWorkspaceCommand({ identifier: 'ws-invoices' }, client, streams())).toBe(0);
    expect(JSON.parse(stdout.text)).toEqual(redacted(mock.workspaces.get('ws-invoices')));
    expect(stderr.text).toBe('');
  });

  it("never prints the organization's resthookSignatureKey", async () => {
    const secret = mock.workspaces.get('ws-invoices')?.organization.resthookSignatureKey;
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    await getWorkspaceCommand({ identifier: 'ws-invoices' }, client, streams());
    expect(stdout.text).not.toContain(String(secret));
    expect(JSON.parse(stdout.text)).toHaveProperty('organization.resthookSignatureKey', '[redacted]');
  });

  it('exits 1 with the RequestError detail for a workspace the service does not know', async () => {
    expect(await getWorkspaceCommand({ identifier: 'nope' }, client, streams())).toBe(1);
    expect(stdout.text).toBe('');
    expect(stderr.text).toMatch(
      /^the service refused: GET http:\/\/127\.0\.0\.1:\d+\/v3\/workspaces\/nope: 404: Not found\.\n$/,
    );
  });

  it('exits 1 on a wrong key, and neither key appears in what it prints', async () => {
    const wrong = createWorkspaceClient({ baseUrl: url, apiKey: 'wrong-key-5521', timeoutMs: 10_000 });
    try {
      expect(await getWorkspaceCommand({ identifier: 'ws-invoices' }, wrong, streams())).toBe(1);
    } finally {
      await wrong.close();
    }
    expect(stderr.text).toContain('401: Invalid token.');
    expect(stderr.text).not.toContain('wrong-key-5521');
    expect(stderr.text).not.toContain(API_KEY);
  });
});

describe('workspace update', () => {
  it.each<{ values: UpdateOptionValues; sent: Record<string, unknown> }>([
    { values: { name: 'Invoices EU' }, sent: { name: 'Invoices EU' } },
    { values: { visibility: 'private' }, sent: { visibility: 'private' } },
    { values: { 'reject-invalid-documents': 'true' }, sent: { rejectInvalidDocuments: true } },
    { values: { 'reject-duplicates': 'null' }, sent: { rejectDuplicates: null } },
    { values: { 'reject-duplicates': 'false' }, sent: { rejectDuplicates: false } },
    { values: { 'document-types': 'doc-a,doc-b' }, sent: { documentTypes: ['doc-a', 'doc-b'] } },
    {
      values: { whitelist: '*@new.example,ap@partner.example' },
      sent: { whitelistIngestAddresses: ['*@new.example', 'ap@partner.example'] },
    },
    { values: { whitelist: 'null' }, sent: { whitelistIngestAddresses: null } },
    { values: { 'document-splitter': 'split-per-page' }, sent: { documentSplitter: 'split-per-page' } },
    {
      values: { name: 'Both', visibility: 'private' },
      sent: { name: 'Both', visibility: 'private' },
    },
  ])('$values sends exactly $sent and prints the updated Workspace', async ({ values, sent }) => {
    expect(await updateWorkspaceCommand({ identifier: 'ws-invoices', values }, client, streams())).toBe(0);
    expect(mock.workspaces.requests.map(({ method, body }) => ({ method, body }))).toEqual([
      { method: 'PATCH', body: sent },
    ]);
    const printed = JSON.parse(stdout.text) as Record<string, unknown>;
    expect(printed).toEqual(redacted(mock.workspaces.get('ws-invoices')));
    if ('name' in sent) expect(printed.name).toBe(sent.name);
    expect(stderr.text).toBe('');
  });

  it.each<{ values: UpdateOptionValues; option: string }>([
    { values: { visibility: 'public' }, option: '--visibility' },
    { values: { 'reject-invalid-documents': 'maybe' }, option: '--reject-invalid-documents' },
    { values: { 'reject-duplicates': 'yes' }, option: '--reject-duplicates' },
    { values: { whitelist: 'acme.example' }, option: '--whitelist' },
    { values: { whitelist: '!ap@partner.example' }, option: '--whitelist' },
    { values: { name: 'Fine', 'document-types': 'a,,b' }, option: '--document-types' },
    { values: { 'document-splitter': '' }, option: '--document-splitter' },
    { values: {}, option: '--name' },
  ])('refuses $values locally naming $option, exit 2, nothing sent', async ({ values, option }) => {
    expect(await updateWorkspaceCommand({ identifier: 'ws-invoices', values }, client, streams())).toBe(2);
    expect(stderr.text).toContain(option);
    expect(stderr.text).toContain('nothing was sent');
    expect(stdout.text).toBe('');
    expect(mock.workspaces.requests).toEqual([]);
  });

  it('exits 1 with the detail when the service refuses', async () => {
    expect(
      await updateWorkspaceCommand({ identifier: 'nope', values: { name: 'X' } }, client, streams()),
    ).toBe(1);
    expect(stderr.text).toContain('PATCH');
    expect(stderr.text).toContain('404: Not found.');
  });
});

describe('workspace sync', () => {
  /** A configuration whose ws-invoices has drifted from the service, with comments to keep. */
  const drifted = `# Production gateway: keep this comment
api:
  baseUrl: https://api.eu1.example.com
  apiKey: \${PARSER_API_KEY}
workspaces: # every ingest address we serve
  - identifier: ws-invoices # Acme's invoices
    ingestEmail: old-invoices@ingest.example.com # copied from the web app in 2023
    whitelistIngestAddresses:
      - "*@acme.example" # all of Acme
      - old-ap@partner.example
    collection: col-invoices
  - identifier: ws-resumes
    ingestEmail: WS-Resumes@Ingest.Mock.Invalid
  - identifier: ws-gone # deleted at the service?
    ingestEmail: gone@ingest.example.com
`;
  const env = { PARSER_API_KEY: API_KEY };

  async function configFile(name: string, text: string): Promise<string> {
    const path = join(directory, name);
    await writeFile(path, text);
    return path;
  }

  const workspacesOf = async (path: string) => {
    return parseConfig({ text: await readFile(path, 'utf8'), env, source: path }).workspaces;
  };

  it('reports per workspace what differs, what is in sync and what the service does not know', async () => {
    const path = await configFile('report.yaml', drifted);
    const code = await syncWorkspacesCommand(
      { workspaces: await workspacesOf(path), configPath: path, write: false, env },
      client,
      streams(),
    );
    expect(code).toBe(1);
    expect(stdout.text).toContain(
      'ws-invoices (old-invoices@ingest.example.com): differs from the service\n' +
        '  ingestEmail: local old-invoices@ingest.example.com, service acme-invoices-7f3a@ingest.example.com\n' +
        '  whitelistIngestAddresses: local ["*@acme.example","old-ap@partner.example"], service ["*@acme.example","ap@partner.example"]\n' +
        '    only local: old-ap@partner.example\n' +
        '    only at the service: ap@partner.example\n',
    );
    expect(stdout.text).toContain('ws-resumes (WS-Resumes@ingest.mock.invalid): in sync\n');
    expect(stdout.text).toContain(
      `ws-gone (gone@ingest.example.com): the service does not know this workspace; it stays in ${path}`,
    );
    expect(stdout.text).toContain('1 in sync, 1 different, 1 not read from the service\n');
    expect(stdout.text).toContain(`run with --write to take the service's values into ${path}`);
    expect(await readFile(path, 'utf8')).toBe(drifted);
    expect(mock.workspaces.requests.map((request) => `${request.method} ${request.identifier}`)).toEqual([
      'GET ws-invoices',
      'GET ws-resumes',
      'GET ws-gone',
    ]);
  });

  it('with discovery, compares only the overrides an entry names, and says which follow the service', async () => {
    const path = await configFile(
      'discovery.yaml',
      [
        'api: {baseUrl: "https://api.example.com", apiKey: k}',
        'discovery: {organization: acme-org}',
        'workspaces:',
        "  - identifier: ws-resumes # settings only: the address and allow-list are the service's",
        '    archives: unpack',
        '  - identifier: ws-invoices # an allow-list of its own',
        '    whitelistIngestAddresses: ["*@acme.example"]',
        '',
      ].join('\n'),
    );
    const code = await syncWorkspacesCommand(
      { workspaces: await workspacesOf(path), discovery: true, configPath: path, write: false, env },
      client,
      streams(),
    );
    expect(code).toBe(0);
    expect(stdout.text).toContain("ws-resumes (the service's address): follows the service\n");
    expect(stdout.text).toContain(
      "ws-invoices (the service's address): differs from the service\n" +
        '  whitelistIngestAddresses: local ["*@acme.example"], service ["*@acme.example","ap@partner.example"]\n',
    );
    expect(stdout.text).not.toContain('ingestEmail:');
  });

  it('exits 0 and says "in sync" when nothing differs', async () => {
    const path = await configFile(
      'in-sync.yaml',
      'api: {baseUrl: "https://api.example.com", apiKey: k}\nworkspaces:\n  - identifier: ws-resumes\n    ingestEmail: ws-resumes@ingest.mock.invalid\n    whitelistIngestAddresses: []\n',
    );
    const code = await syncWorkspacesCommand(
      { workspaces: await workspacesOf(path), configPath: path, write: true, env },
      client,
      streams(),
    );
    expect(code).toBe(0);
    expect(stdout.text).toBe(
      `ws-resumes (ws-resumes@ingest.mock.invalid): in sync\n1 in sync, 0 different, 0 not read from the service\nnothing to write to ${path}\n`,
    );
  });

  it('--write takes the service values into the file, keeping its comments, and keeps the unknown workspace', async () => {
    const path = await configFile('write.yaml', drifted);
    const code = await syncWorkspacesCommand(
      { workspaces: await workspacesOf(path), configPath: path, write: true, env },
      client,
      streams(),
    );
    expect(code).toBe(1); // ws-gone could not be read; the others were still written
    expect(stdout.text).toContain(`wrote ${path}: took the service's values for ws-invoices\n`);
    const written = await readFile(path, 'utf8');
    expect(written).toBe(
      drifted
        .replace('old-invoices@ingest.example.com #', 'acme-invoices-7f3a@ingest.example.com #')
        .replace('      - old-ap@partner.example\n', '      - ap@partner.example\n'),
    );
    expect(written).toContain('# Production gateway: keep this comment\n');
    expect(written).toContain(
      '    ingestEmail: acme-invoices-7f3a@ingest.example.com # copied from the web app in 2023\n',
    );
    expect(written).toContain('      - "*@acme.example" # all of Acme\n');
    expect(written).toContain('  - identifier: ws-gone # deleted at the service?\n');

    const again = new Buffered();
    await syncWorkspacesCommand(
      { workspaces: await workspacesOf(path), configPath: path, write: false, env },
      client,
      { stdout: again, stderr },
    );
    expect(again.text).toContain('ws-invoices (acme-invoices-7f3a@ingest.example.com): in sync\n');
  });

  it('--write refuses, writing nothing, when the service has a rule the gateway cannot apply', async () => {
    mock.workspaces.update('ws-invoices', { whitelistIngestAddresses: ['{ap,ar}@partner.example'] });
    const path = await configFile('unusable.yaml', drifted);
    const code = await syncWorkspacesCommand(
      { workspaces: await workspacesOf(path), configPath: path, write: true, env },
      client,
      streams(),
    );
    expect(code).toBe(2);
    expect(stderr.text).toContain('would not be a valid configuration');
    expect(stderr.text).toContain('brace');
    expect(stderr.text).toContain(`nothing was written to ${path}`);
    expect(await readFile(path, 'utf8')).toBe(drifted);
  });
});

describe('runWorkspaceCommand: arguments and the service to use', () => {
  function input(overrides: Partial<WorkspaceCommandInput>): WorkspaceCommandInput {
    return {
      positionals: ['get', 'ws-invoices'],
      values: {},
      defaultConfigPath: join(directory, 'absent.yaml'),
      env: { PARSER_API_URL: url, PARSER_API_KEY: API_KEY },
      streams: streams(),
      ...overrides,
    };
  }

  it('uses PARSER_API_URL and PARSER_API_KEY alone when there is no configuration file', async () => {
    expect(await runWorkspaceCommand(input({}))).toBe(0);
    expect(JSON.parse(stdout.text)).toMatchObject({ identifier: 'ws-invoices' });
  });

  it('takes the service from the configuration file, the environment winning over it', async () => {
    const path = join(directory, 'env-wins.yaml');
    await writeFile(
      path,
      'api:\n  baseUrl: https://api.eu1.example.invalid\n  apiKey: file-key\nworkspaces:\n  - identifier: ws-resumes\n    ingestEmail: ws-resumes@ingest.mock.invalid\n',
    );
    const code = await runWorkspaceCommand(
      input({
        positionals: ['sync'],
        values: { config: path },
        env: { PARSER_API_URL: url, PARSER_API_KEY: API_KEY },
      }),
    );
    expect(code).toBe(0);
    expect(stdout.text).toContain('ws-resumes (ws-resumes@ingest.mock.invalid): in sync');
  });

  it('runs update through the same path', async () => {
    const code = await runWorkspaceCommand(
      input({ positionals: ['update', 'ws-resumes'], values: { 'reject-duplicates': 'true' } }),
    );
    expect(code).toBe(0);
    expect(mock.workspaces.get('ws-resumes')?.rejectDuplicates).toBe(true);
  });

  it('refuses mock mode: there is no service to manage', async () => {
    const path = join(directory, 'mock-mode.yaml');
    await writeFile(
      path,
      'api:\n  mock: true\nworkspaces:\n  - identifier: w\n    ingestEmail: a@ingest.localhost\n',
    );
    const code = await runWorkspaceCommand(input({ values: { config: path }, env: {} }));
    expect(code).toBe(2);
    expect(stderr.text).toContain('api.mock: true');
    expect(stderr.text).toContain('no parsing service to manage');
    expect(mock.workspaces.requests).toEqual([]);
  });

  it.each<{ name: string; overrides: Partial<WorkspaceCommandInput>; message: RegExp }>([
    { name: 'no subcommand', overrides: { positionals: [] }, message: /workspace needs get, update or sync/ },
    {
      name: 'an unknown subcommand',
      overrides: { positionals: ['delete', 'x'] },
      message: /unknown workspace command delete/,
    },
    {
      name: 'get without an ID',
      overrides: { positionals: ['get'] },
      message: /workspace get needs one workspace ID/,
    },
    {
      name: 'get with two IDs',
      overrides: { positionals: ['get', 'a', 'b'] },
      message: /needs one workspace ID/,
    },
    { name: 'sync with an ID', overrides: { positionals: ['sync', 'a'] }, message: /sync takes no ID/ },
    {
      name: 'update options on get',
      overrides: { values: { name: 'x' } },
      message: /--name: only for workspace update/,
    },
    {
      name: '--write on update',
      overrides: { positionals: ['update', 'a'], values: { write: true, name: 'x' } },
      message: /--write: only for workspace sync/,
    },
    {
      name: 'a --config that does not exist',
      overrides: { values: { config: '/nonexistent/gw.yaml' } },
      message: /cannot read the file/,
    },
    {
      name: 'sync without a configuration file',
      overrides: { positionals: ['sync'] },
      message: /absent\.yaml: cannot read the file/,
    },
    {
      name: 'plain http to another host',
      overrides: { env: { PARSER_API_URL: 'http://api.example.com', PARSER_API_KEY: API_KEY } },
      message: /plain http/,
    },
  ])('exits 2 on $name, sending nothing', async ({ overrides, message }) => {
    expect(await runWorkspaceCommand(input(overrides))).toBe(2);
    expect(stderr.text).toMatch(message);
    expect(stdout.text).toBe('');
    expect(mock.workspaces.requests).toEqual([]);
  });
});
