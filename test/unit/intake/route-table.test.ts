import { describe, expect, it } from 'vitest';
import { testConfig } from '../../../harness/test-config.ts';
import { fileRoutes, type WorkspaceConfig } from '../../../src/config/schema.ts';
import { createRouteTable } from '../../../src/intake/route-table.ts';
import { normalizeAddress } from '../../../src/sender/normalize-address.ts';

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
  const table = createRouteTable(fileRoutes(config), 'off');

  it.each([
    ['postmaster@ingest.example.com', true],
    ['PostMaster@INGEST.example.com.', true],
    ['postmaster@xn--bcher-kva.example', true],
    ['postmaster@bücher.example', true],
    ['Postmaster', true],
    ['POSTMASTER', true],
    ['postmaster@example.com', false],
    ['postmaster@sub.ingest.example.com', false],
    ['postmasters@ingest.example.com', false],
    ['abuse@ingest.example.com', false],
  ])('isPostmaster(%s): %s', (recipient, expected) => {
    expect(table.isPostmaster(recipient)).toBe(expected);
  });

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
    const [first] = fileRoutes(config);
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
    const [first] = fileRoutes(config);
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

describe('createRouteTable with subaddresses', () => {
  const tagged = testConfig({
    workspaces: [
      { identifier: 'inbox', ingestEmail: 'Inbox@Ingest.Example.com' },
      { identifier: 'books', ingestEmail: 'orders@bücher.example' },
      // An ingest address that holds the separator itself, beside its base's workspace.
      { identifier: 'team-ops', ingestEmail: 'team+ops@ingest.example.com' },
      { identifier: 'team', ingestEmail: 'team@ingest.example.com' },
      { identifier: 'plus-first', ingestEmail: '+orders@ingest.example.com' },
    ],
  });
  const table = createRouteTable(fileRoutes(tagged), 'off', { subaddressSeparator: '+' });
  const routed = (recipient: string) => {
    const route = table.route(recipient);
    return route === undefined ? undefined : [route.config.identifier, route.subaddress];
  };

  it.each<[string, [string, string | undefined] | undefined]>([
    ['inbox@ingest.example.com', ['inbox', undefined]],
    ['inbox+invoices@ingest.example.com', ['inbox', 'invoices']],
    // The base compares as any address does: without case, the domain normalised; the tag as written.
    ['INBOX+Invoices@INGEST.example.com.', ['inbox', 'Invoices']],
    ['orders+2024@BÜCHER.example', ['books', '2024']],
    ['orders+2024@xn--bcher-kva.example', ['books', '2024']],
    ['inbox+a+b@ingest.example.com', ['inbox', 'a+b']],
    ['inbox+@ingest.example.com', ['inbox', undefined]],
    // A literal ingest address wins over reading it as a subaddress.
    ['team+ops@ingest.example.com', ['team-ops', undefined]],
    ['TEAM+OPS@ingest.example.com', ['team-ops', undefined]],
    ['team+other@ingest.example.com', ['team', 'other']],
    ['team+ops+x@ingest.example.com', ['team', 'ops+x']],
    ['+orders@ingest.example.com', ['plus-first', undefined]],
    // No base before the separator: only a literal address takes it.
    ['+invoices@ingest.example.com', undefined],
    ['inbo+x@ingest.example.com', undefined],
    ['inbox+invoices@example.com', undefined],
    ['inbox-invoices@ingest.example.com', undefined],
    ['"inbox+x"@ingest.example.com', undefined],
    ['inbox+x y@ingest.example.com', undefined],
  ])('%s → %j', (recipient, expected) => {
    expect(routed(recipient)).toEqual(expected);
    expect(table.lookup(recipient)?.identifier).toBe(expected?.[0]);
  });

  it('keeps the workspace admission policy under a tag', () => {
    expect(table.route('inbox+x@ingest.example.com')?.policy).toBe(
      table.route('inbox@ingest.example.com')?.policy,
    );
  });

  it('routes only literal addresses with the separator off (null), and by default', () => {
    for (const off of [
      createRouteTable(fileRoutes(tagged), 'off', { subaddressSeparator: null }),
      createRouteTable(fileRoutes(tagged), 'off'),
    ]) {
      expect(off.route('inbox+invoices@ingest.example.com')).toBeUndefined();
      expect(off.route('team+ops@ingest.example.com')?.config.identifier).toBe('team-ops');
      expect(off.route('inbox@ingest.example.com')?.subaddress).toBeUndefined();
    }
  });

  it('splits at another separator', () => {
    const dashed = createRouteTable(fileRoutes(tagged), 'off', { subaddressSeparator: '-' });
    expect(dashed.route('inbox-invoices@ingest.example.com')?.subaddress).toBe('invoices');
    expect(dashed.route('inbox+invoices@ingest.example.com')).toBeUndefined();
  });
});

describe('createRouteTable with document types’ addresses', () => {
  const [inbox] = fileRoutes(
    testConfig({ workspaces: [{ identifier: 'inbox', ingestEmail: 'inbox@ingest.example.com' }] }),
  );
  if (inbox === undefined) throw new Error('no workspace');
  const table = createRouteTable(
    [inbox, { ...inbox, ingestEmail: 'receipts@ingest.example.com', addressOfDocumentType: 'dt-receipt' }],
    'off',
    { subaddressSeparator: '+' },
  );

  it('routes a document type’s address to its workspace with the type, and the workspace’s own without', () => {
    const typed = table.route('Receipts@ingest.example.com');
    expect([typed?.config.identifier, typed?.documentType, typed?.subaddress]).toEqual([
      'inbox',
      'dt-receipt',
      undefined,
    ]);
    expect(table.route('inbox@ingest.example.com')?.documentType).toBeUndefined();
    // One workspace, one admission policy, whichever of its addresses is used.
    expect(typed?.policy).toBe(table.route('inbox@ingest.example.com')?.policy);
  });

  it('keeps the type under a tag', () => {
    const tagged = table.route('receipts+acme@ingest.example.com');
    expect([tagged?.config.identifier, tagged?.documentType, tagged?.subaddress]).toEqual([
      'inbox',
      'dt-receipt',
      'acme',
    ]);
  });
});
