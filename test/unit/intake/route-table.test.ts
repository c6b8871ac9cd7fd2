import { describe, expect, it } from 'vitest';
import type { WorkspaceConfig } from '../../../src/config/schema.ts';
import { createRouteTable } from '../../../src/intake/route-table.ts';
import { normalizeAddress } from '../../../src/sender/normalize-address.ts';
import { testConfig } from '../../support/test-config.ts';

const config = testConfig({
  workspaces: [
    {
      identifier: 'invoices',
      ingestEmail: 'Invoices@Ingest.Example.com',
      whitelistIngestAddresses: ['*@acme.example'],
    },
    { identifier: 'books', ingestEmail: 'orders@bücher.example' },
  ],
});

describe('createRouteTable', () => {
  const table = createRouteTable(config.workspaces, 'off');

  it.each([
    ['invoices@ingest.example.com', 'invoices'],
    ['INVOICES@INGEST.EXAMPLE.COM', 'invoices'],
    ['Invoices@ingest.example.com.', 'invoices'],
    ['orders@bücher.example', 'books'],
    ['orders@BÜCHER.example', 'books'],
    ['ORDERS@xn--bcher-kva.example', 'books'],
    ['invoices@example.com', undefined],
    ['invoices@sub.ingest.example.com', undefined],
    ['invoice@ingest.example.com', undefined],
    ['"invoices"@ingest.example.com', undefined],
    ['invoices@ingest.example.com\u0000', undefined],
    ['', undefined],
    ['not an address', undefined],
  ])('%s → %s', (recipient, identifier) => {
    expect(table.lookup(recipient)?.identifier).toBe(identifier);
    expect(table.route(recipient)?.config.identifier).toBe(identifier);
  });

  it('routes with the workspace allow-list compiled', () => {
    const sender = (text: string) => {
      const address = normalizeAddress(text);
      if (address === null) throw new Error(text);
      return address;
    };
    const invoices = table.route('invoices@ingest.example.com');
    expect(invoices?.admits(sender('ann@ACME.example'))).toBe(true);
    expect(invoices?.admits(sender('m@evil.test'))).toBe(false);
    expect(table.route('orders@bücher.example')?.admits(sender('m@evil.test'))).toBe(true);
  });

  it('refuses two workspaces with the same address, however they are written', () => {
    const [first] = config.workspaces;
    if (first === undefined) throw new Error('no workspace');
    const twin: WorkspaceConfig = {
      ...first,
      identifier: 'twin',
      ingestEmail: 'INVOICES@ingest.example.com',
    };
    expect(() => createRouteTable([first, twin], 'off')).toThrow(/routed twice/);
  });

  it.each<{ name: string; a: Partial<WorkspaceConfig>; b: Partial<WorkspaceConfig>; same: boolean }>([
    { name: 'two open workspaces', a: {}, b: { whitelistIngestAddresses: [] }, same: true },
    { name: 'null and absent allow-lists', a: { whitelistIngestAddresses: null }, b: {}, same: true },
    {
      name: 'the same rules in another order, one repeated',
      a: { whitelistIngestAddresses: ['*@a.example', 'b@b.example'] },
      b: { whitelistIngestAddresses: ['b@b.example', '*@a.example', 'b@b.example'] },
      same: true,
    },
    {
      name: 'an open and a listed workspace',
      a: {},
      b: { whitelistIngestAddresses: ['*@a.example'] },
      same: false,
    },
    {
      name: 'two different lists',
      a: { whitelistIngestAddresses: ['*@a.example'] },
      b: { whitelistIngestAddresses: ['*@b.example'] },
      same: false,
    },
    { name: 'the default mode and its own, equal', a: {}, b: { senderAuthentication: 'off' }, same: true },
    { name: 'the default mode and aligned', a: {}, b: { senderAuthentication: 'aligned' }, same: false },
    {
      name: 'aligned and dmarc',
      a: { senderAuthentication: 'aligned' },
      b: { senderAuthentication: 'dmarc' },
      same: false,
    },
  ])('gives $name the same admission policy: $same', ({ a, b, same }) => {
    const [first] = config.workspaces;
    if (first === undefined) throw new Error('no workspace');
    const base = { ...first, whitelistIngestAddresses: undefined, senderAuthentication: undefined };
    const routes = createRouteTable(
      [
        { ...base, ...a, identifier: 'a', ingestEmail: 'a@ingest.example' },
        { ...base, ...b, identifier: 'b', ingestEmail: 'b@ingest.example' },
      ],
      'off',
    );
    const policy = (recipient: string) => routes.route(recipient)?.policy;
    expect(policy('a@ingest.example') === policy('b@ingest.example')).toBe(same);
  });
});
