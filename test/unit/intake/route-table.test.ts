import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load-config.ts';
import type { WorkspaceConfig } from '../../../src/config/schema.ts';
import { createRouteTable } from '../../../src/intake/route-table.ts';
import { normalizeAddress } from '../../../src/sender/normalize-address.ts';

const config = parseConfig({
  source: 'inline',
  env: {},
  text: `api: {mock: true}
workspaces:
  - identifier: invoices
    ingestEmail: Invoices@Ingest.Example.com
    whitelistIngestAddresses: ["*@acme.example"]
  - identifier: books
    ingestEmail: orders@bücher.example
`,
});

describe('createRouteTable', () => {
  const table = createRouteTable(config.workspaces);

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
    expect(() => createRouteTable([first, twin])).toThrow(/routed twice/);
  });
});
