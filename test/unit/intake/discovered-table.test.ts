import { describe, expect, it } from 'vitest';
import { type DiscoveredTable, nextTable, parseTable } from '../../../src/intake/discovered-table.ts';
import type { Catalogue } from '../../../src/parsing-api/organization-catalogue.ts';

const options = { organization: 'org-1', now: 10_000, graceMs: 5000 };

const before: DiscoveredTable = {
  organization: 'org-1',
  refreshedAt: 1000,
  workspaces: [
    { identifier: 'ws-a', ingestEmail: 'a@in.example', whitelistIngestAddresses: null },
    { identifier: 'ws-b', ingestEmail: 'b@in.example', whitelistIngestAddresses: ['*@acme.example'] },
    { identifier: 'ws-c', ingestEmail: 'c@in.example', whitelistIngestAddresses: null },
  ],
  documentTypes: [],
  retired: [
    { address: 'c-old@in.example', workspace: 'ws-c', documentType: null, until: 20_000 },
    { address: 'c-older@in.example', workspace: 'ws-c', documentType: null, until: 9000 },
  ],
};

const after: Catalogue = {
  workspaces: [
    { identifier: 'ws-a', ingestEmail: 'a2@in.example', whitelistIngestAddresses: null },
    { identifier: 'ws-c', ingestEmail: 'C@IN.example', whitelistIngestAddresses: ['x@y.example'] },
    { identifier: 'ws-d', ingestEmail: 'd@in.example', whitelistIngestAddresses: null },
  ],
  documentTypes: [{ identifier: 'dt-1', ingestEmail: 'dt@in.example', workspace: 'ws-a' }],
};

describe('nextTable', () => {
  it('says what a refresh added, removed and rotated, and keeps a replaced address for the grace', () => {
    const { table, changes } = nextTable(before, after, options);
    expect(changes).toEqual([
      {
        change: 'rotated',
        workspace: 'ws-a',
        documentType: null,
        address: 'a2@in.example',
        previous: 'a@in.example',
        graceUntil: new Date(15_000).toISOString(),
      },
      { change: 'added', workspace: 'ws-d', documentType: null, address: 'd@in.example' },
      // A document type's address is routed, so it is added like a workspace's.
      { change: 'added', workspace: 'ws-a', documentType: 'dt-1', address: 'dt@in.example' },
      { change: 'removed', workspace: 'ws-b', documentType: null, address: 'b@in.example' },
      { change: 'grace-ended', workspace: 'ws-c', documentType: null, address: 'c-older@in.example' },
      { change: 'allow-list', workspace: 'ws-c', whitelistIngestAddresses: ['x@y.example'] },
    ]);
    expect(table).toEqual({
      organization: 'org-1',
      refreshedAt: 10_000,
      workspaces: after.workspaces,
      documentTypes: after.documentTypes,
      retired: [
        { address: 'a@in.example', workspace: 'ws-a', documentType: null, until: 15_000 },
        { address: 'c-old@in.example', workspace: 'ws-c', documentType: null, until: 20_000 },
      ],
    });
  });

  it('rotates, removes and keeps in grace the addresses of document types like those of workspaces', () => {
    const withTypes: DiscoveredTable = {
      ...nextTable(before, after, options).table,
      documentTypes: [
        { identifier: 'dt-1', ingestEmail: 'dt@in.example', workspace: 'ws-a' },
        { identifier: 'dt-2', ingestEmail: 'dt2@in.example', workspace: 'ws-d' },
        { identifier: 'dt-3', ingestEmail: 'dt3@in.example', workspace: null },
      ],
      retired: [],
    };
    const { table, changes } = nextTable(
      withTypes,
      {
        workspaces: after.workspaces,
        documentTypes: [
          { identifier: 'dt-1', ingestEmail: 'dt-new@in.example', workspace: 'ws-a' },
          // A type whose workspace the service does not name routes nothing: no change of its own.
          { identifier: 'dt-3', ingestEmail: 'dt3-new@in.example', workspace: null },
        ],
      },
      { ...options, now: 11_000 },
    );
    expect(changes).toEqual([
      {
        change: 'rotated',
        workspace: 'ws-a',
        documentType: 'dt-1',
        address: 'dt-new@in.example',
        previous: 'dt@in.example',
        graceUntil: new Date(16_000).toISOString(),
      },
      { change: 'removed', workspace: 'ws-d', documentType: 'dt-2', address: 'dt2@in.example' },
    ]);
    expect(table.retired).toEqual([
      { address: 'dt@in.example', workspace: 'ws-a', documentType: 'dt-1', until: 16_000 },
    ]);
    // The replaced address ends its grace early when its type is gone, as a workspace's does.
    const gone = nextTable(
      table,
      { workspaces: after.workspaces, documentTypes: [] },
      { ...options, now: 12_000 },
    );
    expect(gone.table.retired).toEqual([]);
    expect(gone.changes).toContainEqual({
      change: 'grace-ended',
      workspace: 'ws-a',
      documentType: 'dt-1',
      address: 'dt@in.example',
    });
  });

  it('keeps no replaced address with no grace, and drops those of a removed workspace', () => {
    const { table } = nextTable(
      before,
      { workspaces: after.workspaces.slice(0, 1), documentTypes: [] },
      {
        ...options,
        graceMs: 0,
      },
    );
    expect(table.retired).toEqual([]);
  });

  it('reports no additions for a first read, and starts afresh for another organization', () => {
    expect(nextTable(null, after, options).changes).toEqual([]);
    const other = nextTable(before, after, { ...options, organization: 'org-2' });
    expect(other.changes).toEqual([]);
    expect(other.table.retired).toEqual([]);
  });

  it('reads back what it stores, and nothing of another organization or shape', () => {
    const { table } = nextTable(before, after, options);
    expect(parseTable(JSON.stringify(table), 'org-1')).toEqual(table);
    expect(parseTable(JSON.stringify(table), 'org-2')).toBeNull();
    expect(parseTable('{"organization":"org-1"}', 'org-1')).toBeNull();
    expect(parseTable('not json', 'org-1')).toBeNull();
    expect(parseTable(null, 'org-1')).toBeNull();
  });
});
