import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../../src/config/load-config.ts';
import { routedWorkspaces } from '../../../src/config/routed-workspaces.ts';
import type { GatewayConfig } from '../../../src/config/schema.ts';
import type { DiscoveredTable } from '../../../src/intake/discovered-table.ts';

const API = 'api:\n  mock: true\n';

function parse(text: string): GatewayConfig {
  return parseConfig({ text: `${API}${text}`, env: {}, source: 'inline' });
}

function problemsOf(text: string): readonly string[] {
  try {
    parse(text);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('the discovery section', () => {
  it('takes an organization, with every and rotationGrace defaulted, and needs no workspaces', () => {
    const config = parse('discovery:\n  organization: org-1\n');
    expect(config.discovery).toEqual({ organization: 'org-1', every: 300_000, rotationGrace: 604_800 });
    expect(config.workspaces).toEqual([]);
  });

  it('lets a workspace entry leave its address to the service', () => {
    const config = parse(
      'discovery: {organization: org-1}\nworkspaces:\n  - identifier: ws-1\n    archives: unpack\n',
    );
    expect(config.workspaces[0]).toMatchObject({ identifier: 'ws-1', archives: 'unpack' });
    expect(config.workspaces[0]?.ingestEmail).toBeUndefined();
  });

  it('refuses a missing organization, a too short period, a negative grace and unknown keys', () => {
    expect(problemsOf('discovery: {every: 10, rotationGrace: -1, often: true}\n')).toEqual([
      expect.stringContaining('discovery.organization'),
      expect.stringContaining('discovery.every: expected an integer from 1000'),
      expect.stringContaining('discovery.rotationGrace: expected an integer from 0'),
      expect.stringContaining('often'),
    ]);
  });

  it('without discovery, still needs a workspace, each with its address', () => {
    expect(problemsOf('')).toEqual([expect.stringContaining('workspaces: expected at least one workspace')]);
    expect(problemsOf('workspaces:\n  - identifier: ws-1\n')).toEqual([
      'workspaces[0].ingestEmail: required unless discovery reads the workspace from the service',
    ]);
  });
});

const table: DiscoveredTable = {
  organization: 'org-1',
  refreshedAt: 1000,
  workspaces: [
    { identifier: 'ws-a', ingestEmail: 'A@Ingest.Example', whitelistIngestAddresses: ['*@acme.example'] },
    { identifier: 'ws-b', ingestEmail: 'b@ingest.example', whitelistIngestAddresses: null },
    { identifier: 'ws-c', ingestEmail: 'c@ingest.example', whitelistIngestAddresses: ['x@y.example'] },
    { identifier: 'ws-none', ingestEmail: null, whitelistIngestAddresses: null },
  ],
  documentTypes: [{ identifier: 'dt-1', ingestEmail: 'dt@ingest.example', workspace: 'ws-a' }],
  retired: [
    { address: 'old-a@ingest.example', workspace: 'ws-a', documentType: null, until: 5000 },
    { address: 'gone@ingest.example', workspace: 'ws-gone', documentType: null, until: 5000 },
    { address: 'expired@ingest.example', workspace: 'ws-a', documentType: null, until: 1500 },
  ],
};

describe('routedWorkspaces', () => {
  const config = parse(
    [
      'discovery: {organization: org-1}',
      'workspaces:',
      '  - identifier: ws-b',
      '    upload: {language: de}',
      '  - identifier: ws-c',
      '    ingestEmail: pinned@ingest.example',
      '    whitelistIngestAddresses: []',
      '  - identifier: ws-own',
      '    ingestEmail: own@file.example',
      '  - identifier: ws-lost',
      '  - identifier: ws-clash',
      '    ingestEmail: b@ingest.example',
      '',
    ].join('\n'),
  );

  it('merges the file over the service: the file wins a field it names, and an address', () => {
    const { routes, problems } = routedWorkspaces(config, table, 2000);
    const view = routes.map((route) => [
      route.identifier,
      route.ingestEmail,
      route.source,
      route.whitelistIngestAddresses ?? null,
    ]);
    expect(view).toEqual([
      ['ws-own', 'own@file.example', 'file', null],
      ['ws-clash', 'b@ingest.example', 'file', null],
      ['ws-a', 'A@ingest.example', 'service', ['*@acme.example']],
      ['ws-c', 'pinned@ingest.example', 'file', []],
      // A document type's address, to its workspace with that workspace's allow-list.
      ['ws-a', 'dt@ingest.example', 'service', ['*@acme.example']],
      ['ws-a', 'old-a@ingest.example', 'grace', ['*@acme.example']],
    ]);
    expect(problems).toEqual([
      'workspace ws-lost: the service does not list it and the entry names no ingestEmail',
      'b@ingest.example (service, workspace ws-b) is not routed: it is the address of workspace ws-clash (file)',
    ]);
  });

  it('keeps a listed workspace’s settings from its entry', () => {
    const { routes } = routedWorkspaces(
      parse(
        'discovery: {organization: org-1}\nworkspaces:\n  - identifier: ws-b\n    upload: {language: de}\n',
      ),
      table,
      2000,
    );
    expect(routes.find((route) => route.identifier === 'ws-b')).toMatchObject({
      ingestEmail: 'b@ingest.example',
      source: 'service',
      upload: { language: 'de' },
      archives: 'skip',
    });
  });

  it('routes the file alone while no table was read, and ignores a table without discovery', () => {
    expect(routedWorkspaces(config, null, 2000).routes.map((route) => route.identifier)).toEqual([
      'ws-c',
      'ws-own',
      'ws-clash',
    ]);
    const plain = parse('workspaces:\n  - identifier: ws-1\n    ingestEmail: in@ingest.example\n');
    expect(
      routedWorkspaces(plain, table, 2000).routes.map((route) => [route.identifier, route.source]),
    ).toEqual([['ws-1', 'file']]);
  });
});

describe('routedWorkspaces: document types', () => {
  const config = parse(
    [
      'discovery: {organization: org-1}',
      'workspaces:',
      '  - identifier: ws-a',
      '    upload: {language: de, documentType: dt-default}',
      '  - identifier: ws-own',
      '    ingestEmail: own@file.example',
      '',
    ].join('\n'),
  );
  const withTypes = (
    documentTypes: DiscoveredTable['documentTypes'],
    retired: DiscoveredTable['retired'] = [],
  ): DiscoveredTable => ({ ...table, documentTypes, retired });
  const typeRoutes = (routes: ReturnType<typeof routedWorkspaces>['routes']) =>
    routes
      .filter((route) => route.addressOfDocumentType !== undefined)
      .map((route) => [route.ingestEmail, route.identifier, route.addressOfDocumentType, route.source]);

  it('routes a document type’s address to its workspace, with that workspace’s settings', () => {
    const { routes, problems } = routedWorkspaces(
      config,
      withTypes([
        { identifier: 'dt-1', ingestEmail: 'DT@Ingest.Example', workspace: 'ws-a' },
        { identifier: 'dt-own', ingestEmail: 'dt-own@ingest.example', workspace: 'ws-own' },
        // A workspace with no address of its own still takes its types' mail.
        { identifier: 'dt-none', ingestEmail: 'dt-none@ingest.example', workspace: 'ws-none' },
        { identifier: 'dt-quiet', ingestEmail: null, workspace: 'ws-a' },
      ]),
      2000,
    );
    expect(typeRoutes(routes)).toEqual([
      ['DT@ingest.example', 'ws-a', 'dt-1', 'service'],
      ['dt-own@ingest.example', 'ws-own', 'dt-own', 'service'],
      ['dt-none@ingest.example', 'ws-none', 'dt-none', 'service'],
    ]);
    expect(routes.find((route) => route.addressOfDocumentType === 'dt-1')).toMatchObject({
      whitelistIngestAddresses: ['*@acme.example'],
      upload: { language: 'de', documentType: 'dt-default' },
    });
    // The workspace's own route is not a document type's.
    expect(routes.find((route) => route.ingestEmail === 'A@ingest.example')?.addressOfDocumentType).toBe(
      undefined,
    );
    expect(problems).toEqual([]);
  });

  it('routes nothing for a type whose workspace the service does not name or the gateway does not route, and says so', () => {
    const { routes, problems } = routedWorkspaces(
      config,
      withTypes([
        { identifier: 'dt-org', ingestEmail: 'dt-org@ingest.example', workspace: null },
        { identifier: 'dt-lost', ingestEmail: 'dt-lost@ingest.example', workspace: 'ws-unknown' },
        // An address a workspace has already: the workspace keeps it.
        { identifier: 'dt-clash', ingestEmail: 'b@ingest.example', workspace: 'ws-a' },
      ]),
      2000,
    );
    expect(typeRoutes(routes)).toEqual([]);
    expect(problems).toEqual([
      'document type dt-org: dt-org@ingest.example is not routed: the service does not say which workspace the type belongs to',
      'document type dt-lost: dt-lost@ingest.example is not routed: its workspace ws-unknown is not routed here',
      'b@ingest.example (service, document type dt-clash of workspace ws-a) is not routed: it is the address of workspace ws-b (service)',
    ]);
  });

  it('keeps a document type’s replaced address routed, with its type, until the grace ends', () => {
    const { routes } = routedWorkspaces(
      config,
      withTypes(
        [{ identifier: 'dt-1', ingestEmail: 'dt-new@ingest.example', workspace: 'ws-a' }],
        [
          { address: 'dt-old@ingest.example', workspace: 'ws-a', documentType: 'dt-1', until: 5000 },
          { address: 'dt-ended@ingest.example', workspace: 'ws-a', documentType: 'dt-1', until: 1500 },
        ],
      ),
      2000,
    );
    expect(typeRoutes(routes)).toEqual([
      ['dt-new@ingest.example', 'ws-a', 'dt-1', 'service'],
      ['dt-old@ingest.example', 'ws-a', 'dt-1', 'grace'],
    ]);
  });
});
