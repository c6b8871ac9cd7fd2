import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from 'undici';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createMockApi,
  loadWorkspaceFixture,
  type MockApi,
  WorkspaceFixtureError,
  type WorkspaceSeed,
  workspaceSeedsFromConfig,
} from '../../src/mock-parsing-api.ts';

const API_KEY = 'mock-workspaces-key';
const AUTH = { authorization: `Bearer ${API_KEY}` };
const JSON_AUTH = { ...AUTH, 'content-type': 'application/json' };
const FIXTURE = fileURLToPath(new URL('../fixtures/workspaces.yaml', import.meta.url));

let fixture: WorkspaceSeed[];
let mock: MockApi;
let client: Client;

async function start(workspaces?: readonly WorkspaceSeed[]) {
  mock = createMockApi({ apiKey: API_KEY, ...(workspaces ? { workspaces } : {}) });
  const { url } = await mock.start({ host: '127.0.0.1', port: 0 });
  client = new Client(url);
}

async function call(
  method: 'GET' | 'PATCH' | 'DELETE' | 'PUT',
  path: string,
  body?: unknown,
  headers: Record<string, string> = method === 'PATCH' ? JSON_AUTH : AUTH,
) {
  const response = await client.request({
    method,
    path,
    headers,
    body: body === undefined ? null : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.body.text();
  return {
    status: response.statusCode,
    headers: response.headers,
    json: JSON.parse(text) as Record<string, unknown>,
  };
}

beforeAll(async () => {
  fixture = await loadWorkspaceFixture(FIXTURE);
});

beforeEach(async () => {
  await start(fixture);
});

afterEach(async () => {
  await client.close();
  await mock.close();
});

describe('GET /v3/workspaces/{identifier}', () => {
  it('answers 200 with the full Workspace shape, seeded from the fixture', async () => {
    const { status, json } = await call('GET', '/v3/workspaces/ws-invoices');
    expect(status).toBe(200);
    expect(Object.keys(json).sort()).toEqual(
      [
        'identifier',
        'organization',
        'name',
        'visibility',
        'collections',
        'documentTypes',
        'rejectInvalidDocuments',
        'rejectDuplicates',
        'members',
        'unvalidatedDocsCount',
        'confirmedDocsCount',
        'ingestEmail',
        'whitelistIngestAddresses',
        'documentSplitter',
      ].sort(),
    );
    expect(json).toMatchObject({
      identifier: 'ws-invoices',
      name: 'Invoices',
      visibility: 'organization',
      documentTypes: ['doc-invoice', 'doc-credit-note'],
      rejectInvalidDocuments: false,
      rejectDuplicates: true,
      unvalidatedDocsCount: 3,
      confirmedDocsCount: 12,
      ingestEmail: 'acme-invoices-7f3a@ingest.example.com',
      whitelistIngestAddresses: ['*@acme.example', 'ap@partner.example'],
      documentSplitter: { identifier: 'split-per-page', name: 'One document per page' },
      members: [
        {
          id: 7,
          name: 'Ada Lovelace',
          username: 'ada',
          email: 'ada@acme.example',
          avatar: expect.any(String),
        },
      ],
      collections: [
        {
          identifier: 'col-invoices',
          name: 'Supplier invoices',
          unvalidatedDocsCount: 3,
          confirmedDocsCount: 12,
          extractor: {
            identifier: 'invoice',
            name: expect.any(String),
            namePlural: expect.any(String),
            category: expect.any(String),
            validatable: expect.any(Boolean),
            createdDt: expect.any(String),
            baseExtractor: {
              identifier: expect.any(String),
              name: expect.any(String),
              namePlural: expect.any(String),
              validatable: expect.any(Boolean),
              isCustom: expect.any(Boolean),
              createdDt: expect.any(String),
            },
          },
        },
      ],
    });
    const organization = json.organization as Record<string, unknown>;
    expect(organization).toMatchObject({
      identifier: 'acme-org',
      name: 'Acme',
      userRole: 'admin',
      avatar: expect.any(String),
      resthookSignatureKey: expect.any(String),
      isTrial: false,
      showCustomFieldCreation: expect.any(Boolean),
    });
    const tool = organization.validationToolConfig as Record<string, unknown>;
    expect(tool).toMatchObject({
      hideActions: false,
      restrictDocumentSplitting: false,
      disableManualAnnotationEditing: false,
    });
    expect(tool.theme).toMatchObject({
      palette: {
        mode: 'light',
        text: { primary: expect.any(String) },
        primary: { contrastText: expect.any(String) },
      },
      typography: { fontFamily: expect.any(String), fontWeightBold: expect.any(String) },
      borderRadius: expect.any(Number),
      fontUrl: expect.any(String),
    });
  });

  it('fills what a seed leaves out: a generated ingestEmail, one collection, the defaults', async () => {
    const { json } = await call('GET', '/v3/workspaces/ws-resumes');
    expect(json).toMatchObject({
      identifier: 'ws-resumes',
      visibility: 'private',
      ingestEmail: 'ws-resumes@ingest.mock.invalid',
      whitelistIngestAddresses: null,
      rejectDuplicates: false,
      rejectInvalidDocuments: false,
      documentTypes: [],
      members: [],
      documentSplitter: null,
      collections: [expect.objectContaining({ identifier: 'ws-resumes-invoices' })],
    });
  });

  it('answers in snake_case with snake_case=true', async () => {
    const { json } = await call('GET', '/v3/workspaces/ws-invoices?snake_case=true');
    expect(json).toMatchObject({
      ingest_email: 'acme-invoices-7f3a@ingest.example.com',
      whitelist_ingest_addresses: ['*@acme.example', 'ap@partner.example'],
      reject_duplicates: true,
      unvalidated_docs_count: 3,
      document_splitter: { identifier: 'split-per-page' },
    });
    expect(json.ingestEmail).toBeUndefined();
    const organization = json.organization as Record<string, Record<string, unknown>>;
    expect(organization.validation_tool_config?.hide_actions).toBe(false);
  });

  it('answers 404 with a RequestError for an unknown workspace', async () => {
    const { status, json } = await call('GET', '/v3/workspaces/nope');
    expect(status).toBe(404);
    expect(json).toEqual({
      type: 'client_error',
      errors: [{ attr: null, code: 'not_found', detail: 'Not found.' }],
    });
  });

  it('knows no workspace when created without seeds, as before', async () => {
    await client.close();
    await mock.close();
    await start();
    expect((await call('GET', '/v3/workspaces/ws-invoices')).status).toBe(404);
  });
});

describe('authentication', () => {
  it.each<{ method: 'GET' | 'PATCH'; headers: Record<string, string>; code: string }>([
    { method: 'GET' as const, headers: {}, code: 'not_authenticated' },
    { method: 'GET' as const, headers: { authorization: 'Bearer wrong' }, code: 'authentication_failed' },
    { method: 'PATCH' as const, headers: { 'content-type': 'application/json' }, code: 'not_authenticated' },
    {
      method: 'PATCH' as const,
      headers: { authorization: 'Bearer wrong', 'content-type': 'application/json' },
      code: 'authentication_failed',
    },
  ])('$method with $headers → 401 $code, nothing changed', async ({ method, headers, code }) => {
    const { status, json } = await call(
      method,
      '/v3/workspaces/ws-invoices',
      method === 'PATCH' ? { name: 'X' } : undefined,
      headers,
    );
    expect(status).toBe(401);
    expect(json).toMatchObject({ type: 'client_error', errors: [{ code }] });
    expect(mock.workspaces.get('ws-invoices')?.name).toBe('Invoices');
  });
});

describe('PATCH /v3/workspaces/{identifier}', () => {
  it.each([
    { body: { name: 'Invoices EU' }, expected: { name: 'Invoices EU' } },
    { body: { visibility: 'private' }, expected: { visibility: 'private' } },
    { body: { rejectInvalidDocuments: true }, expected: { rejectInvalidDocuments: true } },
    { body: { rejectDuplicates: false }, expected: { rejectDuplicates: false } },
    { body: { rejectDuplicates: null }, expected: { rejectDuplicates: null } },
    { body: { documentTypes: ['doc-receipt'] }, expected: { documentTypes: ['doc-receipt'] } },
    { body: { documentTypes: [] }, expected: { documentTypes: [] } },
    {
      body: { whitelistIngestAddresses: ['*@new.example'] },
      expected: { whitelistIngestAddresses: ['*@new.example'] },
    },
    { body: { whitelistIngestAddresses: null }, expected: { whitelistIngestAddresses: null } },
    {
      body: { documentSplitter: 'split-per-page' },
      expected: { documentSplitter: { identifier: 'split-per-page', name: 'One document per page' } },
    },
    {
      body: { documentSplitter: 'split-x' },
      expected: { documentSplitter: { identifier: 'split-x', name: 'split-x' } },
    },
  ])('$body → 200, that field changed and nothing else', async ({ body, expected }) => {
    const before = mock.workspaces.get('ws-invoices');
    const { status, json } = await call('PATCH', '/v3/workspaces/ws-invoices', body);
    expect(status).toBe(200);
    expect(json).toEqual({ ...before, ...expected });
    expect((await call('GET', '/v3/workspaces/ws-invoices')).json).toEqual(json);
  });

  it('changes several fields at once', async () => {
    const { json } = await call('PATCH', '/v3/workspaces/ws-resumes', {
      name: 'CVs',
      visibility: 'organization',
      rejectDuplicates: true,
    });
    expect(json).toMatchObject({ name: 'CVs', visibility: 'organization', rejectDuplicates: true });
  });

  it('gives the document side the new settings through workspaceSettings', async () => {
    expect(mock.workspaces.settings('ws-resumes')).toEqual({
      rejectDuplicates: false,
      rejectInvalidDocuments: false,
    });
    await call('PATCH', '/v3/workspaces/ws-resumes', {
      rejectDuplicates: null,
      rejectInvalidDocuments: true,
    });
    expect(mock.workspaces.settings('ws-resumes')).toEqual({
      rejectDuplicates: null,
      rejectInvalidDocuments: true,
    });
    expect(mock.workspaces.settings('nope')).toBeUndefined();
  });

  it.each([
    {
      body: { visibility: 'public' },
      attr: 'visibility',
      code: 'invalid_choice',
      detail: '"public" is not a valid choice.',
    },
    { body: { visibility: null }, attr: 'visibility', code: 'null', detail: 'This field may not be null.' },
    { body: { name: 5 }, attr: 'name', code: 'invalid', detail: 'Not a valid string.' },
    { body: { name: ' ' }, attr: 'name', code: 'blank', detail: 'This field may not be blank.' },
    {
      body: { name: 'x'.repeat(256) },
      attr: 'name',
      code: 'max_length',
      detail: expect.stringContaining('255'),
    },
    {
      body: { rejectInvalidDocuments: 'true' },
      attr: 'rejectInvalidDocuments',
      code: 'invalid',
      detail: 'Must be a valid boolean.',
    },
    {
      body: { rejectInvalidDocuments: null },
      attr: 'rejectInvalidDocuments',
      code: 'null',
      detail: 'This field may not be null.',
    },
    {
      body: { rejectDuplicates: 1 },
      attr: 'rejectDuplicates',
      code: 'invalid',
      detail: 'Must be a valid boolean.',
    },
    {
      body: { documentTypes: 'doc-a' },
      attr: 'documentTypes',
      code: 'not_a_list',
      detail: 'Expected a list of items but got type "str".',
    },
    {
      body: { documentTypes: null },
      attr: 'documentTypes',
      code: 'null',
      detail: 'This field may not be null.',
    },
    {
      body: { documentTypes: ['ok', 3] },
      attr: 'documentTypes.1',
      code: 'invalid',
      detail: 'Not a valid string.',
    },
    {
      body: { whitelistIngestAddresses: '*@a.example' },
      attr: 'whitelistIngestAddresses',
      code: 'not_a_list',
      detail: expect.any(String),
    },
    {
      body: { whitelistIngestAddresses: ['no-at-sign'] },
      attr: 'whitelistIngestAddresses.0',
      code: 'invalid',
      detail: expect.stringContaining('*@example.com'),
    },
    {
      body: { whitelistIngestAddresses: [''] },
      attr: 'whitelistIngestAddresses.0',
      code: 'blank',
      detail: expect.any(String),
    },
    {
      body: { documentSplitter: 42 },
      attr: 'documentSplitter',
      code: 'incorrect_type',
      detail: expect.any(String),
    },
    { body: { documentSplitter: null }, attr: 'documentSplitter', code: 'null', detail: expect.any(String) },
    {
      body: { ingestEmail: 'mine@ingest.example' },
      attr: 'ingestEmail',
      code: 'read_only',
      detail: 'This field is read-only.',
    },
    {
      body: { identifier: 'other' },
      attr: 'identifier',
      code: 'read_only',
      detail: 'This field is read-only.',
    },
    { body: { colour: 'red' }, attr: 'colour', code: 'unknown_field', detail: 'Unknown field.' },
    {
      body: { reject_duplicates: true },
      attr: 'reject_duplicates',
      code: 'unknown_field',
      detail: 'Unknown field.',
    },
    {
      body: ['name'],
      attr: null,
      code: 'invalid',
      detail: 'Invalid data. Expected a dictionary, but got list.',
    },
  ])('$body → 400 $code on $attr, nothing changed', async ({ body, attr, code, detail }) => {
    const before = mock.workspaces.get('ws-invoices');
    const { status, json } = await call('PATCH', '/v3/workspaces/ws-invoices', body);
    expect(status).toBe(400);
    expect(json).toEqual({ type: 'validation_error', errors: [{ attr, code, detail }] });
    expect(mock.workspaces.get('ws-invoices')).toEqual(before);
  });

  it('reports every bad field at once and applies none of the good ones', async () => {
    const { status, json } = await call('PATCH', '/v3/workspaces/ws-invoices', {
      name: 'Fine',
      visibility: 'public',
      rejectDuplicates: 'no',
    });
    expect(status).toBe(400);
    expect((json.errors as Array<{ attr: string }>).map((error) => error.attr)).toEqual([
      'visibility',
      'rejectDuplicates',
    ]);
    expect(mock.workspaces.get('ws-invoices')?.name).toBe('Invoices');
  });

  it('takes snake_case names and answers in snake_case with snake_case=true', async () => {
    const { status, json } = await call('PATCH', '/v3/workspaces/ws-invoices?snake_case=true', {
      reject_duplicates: null,
      whitelist_ingest_addresses: ['*@x.example'],
    });
    expect(status).toBe(200);
    expect(json).toMatchObject({ reject_duplicates: null, whitelist_ingest_addresses: ['*@x.example'] });
    expect(mock.workspaces.get('ws-invoices')?.rejectDuplicates).toBeNull();
  });

  it('answers 404 for an unknown workspace', async () => {
    const { status, json } = await call('PATCH', '/v3/workspaces/nope', { name: 'X' });
    expect(status).toBe(404);
    expect(json).toMatchObject({ errors: [{ code: 'not_found' }] });
  });

  it('answers 400 parse_error for a body that is not JSON', async () => {
    const { status, json } = await call('PATCH', '/v3/workspaces/ws-invoices', '{"name": ');
    expect(status).toBe(400);
    expect(json).toMatchObject({ errors: [{ attr: null, code: 'parse_error' }] });
  });

  it('answers 415 for a body that is not declared JSON', async () => {
    const { status, json } = await call('PATCH', '/v3/workspaces/ws-invoices', 'name=X', {
      ...AUTH,
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(status).toBe(415);
    expect(json).toMatchObject({ errors: [{ code: 'unsupported_media_type' }] });
  });

  it.each(['DELETE', 'PUT'] as const)('answers %s with 405', async (method) => {
    const { status, headers } = await call(method, '/v3/workspaces/ws-invoices', undefined, AUTH);
    expect(status).toBe(405);
    expect(headers.allow).toBe('GET, PATCH');
  });
});

describe('the request log', () => {
  it('records every workspace request with its body and status', async () => {
    await call('GET', '/v3/workspaces/ws-invoices');
    await call('PATCH', '/v3/workspaces/ws-invoices', { visibility: 'public' });
    await call('PATCH', '/v3/workspaces/ws-invoices', { name: 'N' });
    expect(
      mock.workspaces.requests.map(({ method, identifier, body, status }) => ({
        method,
        identifier,
        body,
        status,
      })),
    ).toEqual([
      { method: 'GET', identifier: 'ws-invoices', body: undefined, status: 200 },
      { method: 'PATCH', identifier: 'ws-invoices', body: { visibility: 'public' }, status: 400 },
      { method: 'PATCH', identifier: 'ws-invoices', body: { name: 'N' }, status: 200 },
    ]);
  });
});

describe('seeds', () => {
  let directory: string;
  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'mock-workspaces-'));
  });
  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('from a list of workspaces as a gateway configures them: the first of an identifier wins', async () => {
    const configured = [
      {
        identifier: 'ws-a',
        ingestEmail: 'docs@ingest.example',
        whitelistIngestAddresses: ['*@acme.example'],
      },
      { identifier: 'ws-b', ingestEmail: 'other@ingest.example' },
      { identifier: 'ws-a', ingestEmail: 'second-address@ingest.example' },
    ];
    await client.close();
    await mock.close();
    await start(workspaceSeedsFromConfig(configured));
    expect((await call('GET', '/v3/workspaces/ws-a')).json).toMatchObject({
      identifier: 'ws-a',
      name: 'ws-a',
      ingestEmail: 'docs@ingest.example',
      whitelistIngestAddresses: ['*@acme.example'],
      visibility: 'organization',
      collections: [
        expect.objectContaining({ extractor: expect.objectContaining({ identifier: 'invoice' }) }),
      ],
      organization: expect.objectContaining({ identifier: expect.any(String) }),
    });
    expect((await call('GET', '/v3/workspaces/ws-b')).json).toMatchObject({ whitelistIngestAddresses: null });
  });

  it('reads a JSON fixture as well, as a bare list', async () => {
    const path = join(directory, 'list.json');
    await writeFile(path, JSON.stringify([{ identifier: 'j1', visibility: 'private' }]));
    expect(await loadWorkspaceFixture(path)).toEqual([{ identifier: 'j1', visibility: 'private' }]);
  });

  it.each([
    {
      text: 'workspaces:\n  - identifier: w\n    visibility: public\n',
      problem: /workspaces\.0\.visibility/,
    },
    { text: 'workspaces:\n  - name: no identifier\n', problem: /identifier/ },
    { text: 'workspaces:\n  - identifier: w\n    ingestEmail: [\n', problem: /not YAML or JSON/ },
  ])('refuses a bad fixture naming the file and the problem: $problem', async ({ text, problem }) => {
    const path = join(directory, 'bad.yaml');
    await writeFile(path, text);
    const loading = loadWorkspaceFixture(path);
    await expect(loading).rejects.toThrow(WorkspaceFixtureError);
    await expect(loadWorkspaceFixture(path)).rejects.toThrow(problem);
    await expect(loadWorkspaceFixture(path)).rejects.toThrow(path);
  });

  it('refuses the same identifier seeded twice', () => {
    expect(() =>
      createMockApi({ apiKey: API_KEY, workspaces: [{ identifier: 'w' }, { identifier: 'w' }] }),
    ).toThrow(/seeded twice/);
  });
});
