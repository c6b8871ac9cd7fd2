import { Client } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMockApi, type MockApi } from '../../src/mock-parsing-api.ts';

const API_KEY = 'mock-lists-key';
const AUTH = { authorization: `Bearer ${API_KEY}` };

let mock: MockApi;
let client: Client;

beforeEach(async () => {
  mock = createMockApi({
    apiKey: API_KEY,
    organization: { identifier: 'org-1' },
    workspaces: [
      { identifier: 'ws-a' },
      { identifier: 'ws-b', whitelistIngestAddresses: ['*@example.com'] },
      { identifier: 'ws-c' },
      { identifier: 'ws-other', organization: { identifier: 'org-2' } },
    ],
    documentTypes: [
      { identifier: 'dt-invoice', workspace: 'ws-a' },
      { identifier: 'dt-receipt', workspace: null, ingestEmail: null },
    ],
  });
  const { url } = await mock.start({ host: '127.0.0.1', port: 0 });
  client = new Client(url);
});

afterEach(async () => {
  await client.close();
  await mock.close();
});

async function get(path: string, headers: Record<string, string> = AUTH) {
  const response = await client.request({ method: 'GET', path, headers });
  return { status: response.statusCode, json: (await response.body.json()) as unknown };
}

async function send(method: 'POST' | 'DELETE' | 'PATCH', path: string, body?: unknown) {
  const response = await client.request({
    method,
    path,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? null : JSON.stringify(body),
  });
  const text = await response.body.text();
  return { status: response.statusCode, json: text === '' ? undefined : (JSON.parse(text) as unknown) };
}

interface Page {
  count: number;
  next: string | null;
  previous: string | null;
  results: { identifier: string; ingestEmail: string | null }[];
}

describe('GET /v3/workspaces?organization=…', () => {
  it('lists the organization’s workspaces on one page by default', async () => {
    const { status, json } = await get('/v3/workspaces?organization=org-1');
    expect(status).toBe(200);
    const page = json as Page;
    expect(page.count).toBe(3);
    expect(page.next).toBeNull();
    expect(page.previous).toBeNull();
    expect(page.results.map((w) => w.identifier)).toEqual(['ws-a', 'ws-b', 'ws-c']);
    expect(page.results[0]?.ingestEmail).toBe('ws-a@ingest.mock.invalid');
  });

  it('pages by limit and offset with absolute next and previous links', async () => {
    const first = (await get('/v3/workspaces?organization=org-1&limit=2')).json as Page;
    expect(first.results.map((w) => w.identifier)).toEqual(['ws-a', 'ws-b']);
    expect(first.next).toMatch(
      /^http:\/\/127\.0\.0\.1:\d+\/v3\/workspaces\?organization=org-1&limit=2&offset=2$/,
    );
    const next = new URL(first.next ?? '');
    const second = (await get(`${next.pathname}${next.search}`)).json as Page;
    expect(second.results.map((w) => w.identifier)).toEqual(['ws-c']);
    expect(second.next).toBeNull();
    expect(second.previous).toMatch(/\/v3\/workspaces\?organization=org-1&limit=2$/);
  });

  it('pages by the configured page size, or answers a bare list', async () => {
    mock.setOrganizationLists({ pageSize: 1 });
    const paged = (await get('/v3/workspaces?organization=org-1')).json as Page;
    expect(paged.results).toHaveLength(1);
    expect(paged.next).toMatch(/limit=1&offset=1$/);
    const changed = await send('PATCH', '/_mock/settings', { organizationLists: { shape: 'bare' } });
    expect(changed.status).toBe(200);
    const bare = (await get('/v3/workspaces?organization=org-1')).json as Page['results'];
    expect(bare.map((w) => w.identifier)).toEqual(['ws-a', 'ws-b', 'ws-c']);
  });

  it('refuses a request without the key', async () => {
    expect((await get('/v3/workspaces?organization=org-1', {})).status).toBe(401);
  });
});

describe('GET /v3/document_types?organization=…', () => {
  it('lists the types with their ingest address and workspace', async () => {
    const page = (await get('/v3/document_types?organization=org-1')).json as Page;
    expect(page.results).toEqual([
      {
        identifier: 'dt-invoice',
        name: 'dt-invoice',
        organization: 'org-1',
        workspace: 'ws-a',
        ingestEmail: 'dt-invoice@ingest.mock.invalid',
      },
      {
        identifier: 'dt-receipt',
        name: 'dt-receipt',
        organization: 'org-1',
        workspace: null,
        ingestEmail: null,
      },
    ]);
  });
});

describe('/_mock/workspaces and /_mock/document_types', () => {
  it('adds, rotates and removes workspaces at run time', async () => {
    const added = await send('POST', '/_mock/workspaces', { identifier: 'ws-new' });
    expect(added.status).toBe(201);
    expect((added.json as { organization: { identifier: string } }).organization.identifier).toBe('org-1');
    expect((await send('POST', '/_mock/workspaces', { identifier: 'ws-new' })).status).toBe(409);
    const rotated = await send('POST', '/_mock/workspaces/ws-a/rotate', {});
    expect(rotated.status).toBe(200);
    const address = (rotated.json as { ingestEmail: string }).ingestEmail;
    expect(address).not.toBe('ws-a@ingest.mock.invalid');
    const chosen = await send('POST', '/_mock/workspaces/ws-b/rotate', { ingestEmail: 'b2@example.net' });
    expect((chosen.json as { ingestEmail: string }).ingestEmail).toBe('b2@example.net');
    expect((await send('DELETE', '/_mock/workspaces/ws-c')).status).toBe(204);
    expect((await send('DELETE', '/_mock/workspaces/ws-c')).status).toBe(404);
    const page = (await get('/v3/workspaces?organization=org-1')).json as Page;
    expect(page.results.map((w) => [w.identifier, w.ingestEmail])).toEqual([
      ['ws-a', address],
      ['ws-b', 'b2@example.net'],
      ['ws-new', 'ws-new@ingest.mock.invalid'],
    ]);
  });

  it('adds, rotates and removes document types at run time, in code too', async () => {
    expect(
      (await send('POST', '/_mock/document_types', { identifier: 'dt-new', workspace: 'ws-b' })).status,
    ).toBe(201);
    expect((await send('POST', '/_mock/document_types', { identifier: 7 })).status).toBe(400);
    mock.documentTypes.rotate('dt-invoice', 'invoices@example.net');
    mock.documentTypes.remove('dt-receipt');
    const page = (await get('/v3/document_types?organization=org-1')).json as Page;
    expect(page.results.map((t) => [t.identifier, t.ingestEmail])).toEqual([
      ['dt-invoice', 'invoices@example.net'],
      ['dt-new', 'dt-new@ingest.mock.invalid'],
    ]);
  });
});
