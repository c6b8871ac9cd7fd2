import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMockApi, type MockApi } from '@ingest-gateway/mock-parsing-api';
import { afterEach, describe, expect, it } from 'vitest';
import { CatalogueError, createCatalogueClient } from '../../src/parsing-api/organization-catalogue.ts';

const API_KEY = 'catalogue-key';
const closers: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function mockWith(
  options: Partial<Parameters<typeof createMockApi>[0]> = {},
): Promise<{ mock: MockApi; url: string }> {
  const mock = createMockApi({
    apiKey: API_KEY,
    organization: { identifier: 'org-1' },
    workspaces: [
      { identifier: 'ws-a', whitelistIngestAddresses: ['*@example.com'] },
      { identifier: 'ws-b' },
      { identifier: 'ws-c', ingestEmail: 'c@in.example.net' },
      { identifier: 'ws-x', organization: { identifier: 'org-2' } },
    ],
    documentTypes: [
      { identifier: 'dt-1', workspace: 'ws-a' },
      { identifier: 'dt-2', ingestEmail: null },
    ],
    ...options,
  });
  const { url } = await mock.start({ host: '127.0.0.1', port: 0 });
  closers.push(() => mock.close());
  return { mock, url };
}

function client(url: string) {
  const catalogue = createCatalogueClient({ baseUrl: url, apiKey: API_KEY, timeoutMs: 5000 });
  closers.push(() => catalogue.close());
  return catalogue;
}

/** A server answering each path from `answers` (JSON), for the shapes the mock does not make. */
async function serverWith(answers: Record<string, { status?: number; body: unknown }>): Promise<string> {
  const server: Server = createServer((req, res) => {
    const answer = answers[req.url ?? ''];
    const text = answer === undefined ? '{"type":"client_error","errors":[]}' : JSON.stringify(answer.body);
    res.writeHead(answer?.status ?? (answer ? 200 : 404), { 'content-type': 'application/json' }).end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const expected = {
  workspaces: [
    {
      identifier: 'ws-a',
      ingestEmail: 'ws-a@ingest.mock.invalid',
      whitelistIngestAddresses: ['*@example.com'],
    },
    { identifier: 'ws-b', ingestEmail: 'ws-b@ingest.mock.invalid', whitelistIngestAddresses: null },
    { identifier: 'ws-c', ingestEmail: 'c@in.example.net', whitelistIngestAddresses: null },
  ],
  documentTypes: [
    { identifier: 'dt-1', ingestEmail: 'dt-1@ingest.mock.invalid', workspace: 'ws-a' },
    { identifier: 'dt-2', ingestEmail: null, workspace: null },
  ],
};

describe('reading an organization’s workspaces and document types', () => {
  it('reads one page', async () => {
    const { url } = await mockWith();
    expect(await client(url).read('org-1')).toEqual(expected);
  });

  it('follows next links page by page', async () => {
    const { url } = await mockWith({ organizationLists: { pageSize: 1 } });
    expect(await client(url).read('org-1')).toEqual(expected);
  });

  it('reads the bare list', async () => {
    const { url } = await mockWith({ organizationLists: { shape: 'bare' } });
    expect(await client(url).read('org-1')).toEqual(expected);
  });

  it('reads snake_case keys, relative next links, a workspace object and an empty next', async () => {
    const url = await serverWith({
      '/v3/workspaces?organization=o': {
        body: {
          count: 2,
          next: 'workspaces?organization=o&offset=1&limit=1',
          results: [
            { identifier: 'w1', ingest_email: 'w1@x.example', whitelist_ingest_addresses: ['a@b.example'] },
          ],
        },
      },
      '/v3/workspaces?organization=o&offset=1&limit=1': {
        body: {
          count: 2,
          next: '',
          previous: '/v3/workspaces?organization=o',
          results: [{ identifier: 'w2' }],
        },
      },
      '/v3/document_types?organization=o': {
        body: [
          { identifier: 't1', ingest_email: 't1@x.example', workspace: { identifier: 'w1', name: 'W' } },
        ],
      },
    });
    expect(await client(url).read('o')).toEqual({
      workspaces: [
        { identifier: 'w1', ingestEmail: 'w1@x.example', whitelistIngestAddresses: ['a@b.example'] },
        { identifier: 'w2', ingestEmail: null, whitelistIngestAddresses: null },
      ],
      documentTypes: [{ identifier: 't1', ingestEmail: 't1@x.example', workspace: 'w1' }],
    });
  });

  const refusals: [string, Record<string, { status?: number; body: unknown }>, RegExp][] = [
    [
      'an error status',
      { '/v3/workspaces?organization=o': { status: 503, body: { type: 'server_error' } } },
      /: 503/,
    ],
    [
      'an object that is not a page',
      { '/v3/workspaces?organization=o': { body: { workspaces: [] } } },
      /neither a list nor a page/,
    ],
    [
      'an item without an identifier',
      { '/v3/workspaces?organization=o': { body: [{ ingestEmail: 'a@b.example' }] } },
      /item 0: no identifier/,
    ],
    [
      'an address that is not a string',
      { '/v3/workspaces?organization=o': { body: [{ identifier: 'w', ingestEmail: 7 }] } },
      /ingestEmail is 7/,
    ],
    [
      'a next link to another origin',
      {
        '/v3/workspaces?organization=o': {
          body: { next: 'https://elsewhere.example/v3/workspaces?offset=1', results: [] },
        },
      },
      /not on the service's base URL/,
    ],
    [
      'a next link back to a page read',
      { '/v3/workspaces?organization=o': { body: { next: '/v3/workspaces?organization=o', results: [] } } },
      /read already/,
    ],
    [
      'an identifier listed twice',
      { '/v3/workspaces?organization=o': { body: [{ identifier: 'w' }, { identifier: 'w' }] } },
      /listed twice/,
    ],
    [
      'a document type with an unreadable workspace',
      {
        '/v3/workspaces?organization=o': { body: [] },
        '/v3/document_types?organization=o': { body: [{ identifier: 't', workspace: 3 }] },
      },
      /workspace is 3/,
    ],
    [
      'a missing document type list',
      { '/v3/workspaces?organization=o': { body: [] } },
      /document_types\?organization=o: 404/,
    ],
  ];
  it.each(refusals)('refuses %s, never reading it in part', async (_name, answers, message) => {
    const url = await serverWith(answers);
    const reading = client(url).read('o');
    await expect(reading).rejects.toBeInstanceOf(CatalogueError);
    await expect(reading).rejects.toThrow(message);
  });

  it('says when the service cannot be reached', async () => {
    const url = await serverWith({});
    const catalogue = createCatalogueClient({
      baseUrl: url.replace(/:\d+$/, ':1'),
      apiKey: API_KEY,
      timeoutMs: 5000,
    });
    closers.push(() => catalogue.close());
    await expect(catalogue.read('o')).rejects.toThrow(/no answer/);
  });
});
