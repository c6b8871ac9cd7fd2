import type { SMTPServerSession } from 'smtp-server';
import { describe, expect, it } from 'vitest';
import { testConfig } from '../../../harness/test-config.ts';
import { fileRoutes } from '../../../src/config/schema.ts';
import { createRouteTable } from '../../../src/intake/route-table.ts';
import { createSessionChecks, type RoutedRecipients } from '../../../src/smtp/session-checks.ts';

const config = testConfig({
  smtp: { maxRecipients: 3 },
  workspaces: [
    { identifier: 'open-a', ingestEmail: 'a@ingest.test' },
    { identifier: 'open-b', ingestEmail: 'b@ingest.test' },
    { identifier: 'listed', ingestEmail: 'listed@ingest.test', whitelistIngestAddresses: ['*@acme.example'] },
    { identifier: 'authenticated', ingestEmail: 'auth@ingest.test', senderAuthentication: 'aligned' },
  ],
});
const routes = createRouteTable(fileRoutes(config), config.auth.senderAuthentication);
const checks = createSessionChecks({
  settings: config.smtp,
  routes: { lookup: (recipient) => routes.route(recipient) },
  routed: new WeakMap(),
  closing: () => false,
});

/** A session whose transaction has already accepted `accepted`. */
const session = (accepted: string[]) =>
  ({
    envelope: { mailFrom: false, rcptTo: accepted.map((address) => ({ address, args: false })) },
  }) as unknown as SMTPServerSession;

const atRcpt = (recipient: string, accepted: string[]) => {
  const refusal = checks.atRcpt({ address: recipient, args: false }, session(accepted));
  return refusal === null ? 'accepted' : refusal.code;
};

describe('RCPT checks', () => {
  it.each<{ name: string; recipient: string; accepted: string[]; expected: string }>([
    { name: 'a first ingest address', recipient: 'a@ingest.test', accepted: [], expected: 'accepted' },
    {
      name: 'an address no workspace has',
      recipient: 'x@ingest.test',
      accepted: [],
      expected: 'RECIPIENT_UNKNOWN',
    },
    {
      name: 'a second workspace of the same policy',
      recipient: 'b@ingest.test',
      accepted: ['a@ingest.test'],
      expected: 'accepted',
    },
    {
      name: 'a listed workspace after an open one',
      recipient: 'listed@ingest.test',
      accepted: ['a@ingest.test'],
      expected: 'OTHER_ADMISSION_POLICY',
    },
    {
      name: 'an open workspace after a listed one',
      recipient: 'a@ingest.test',
      accepted: ['listed@ingest.test'],
      expected: 'OTHER_ADMISSION_POLICY',
    },
    {
      name: 'an authenticating workspace after an open one',
      recipient: 'auth@ingest.test',
      accepted: ['b@ingest.test'],
      expected: 'OTHER_ADMISSION_POLICY',
    },
    {
      name: 'the same address again, however written',
      recipient: 'A@Ingest.Test',
      accepted: ['a@ingest.test'],
      expected: 'accepted',
    },
    {
      name: 'a recipient past maxRecipients, before anything else',
      recipient: 'listed@ingest.test',
      accepted: ['a@ingest.test', 'b@ingest.test', 'a2@ingest.test'],
      expected: 'TOO_MANY_RECIPIENTS',
    },
  ])('$name: $expected', ({ recipient, accepted, expected }) => {
    expect(atRcpt(recipient, accepted)).toBe(expected);
  });

  it('refuses new sessions and transactions once the intake is closing', async () => {
    const closing = createSessionChecks({
      settings: config.smtp,
      routes: { lookup: () => undefined },
      routed: new WeakMap(),
      closing: () => true,
    });
    expect((await closing.atConnect(session([])))?.code).toBe('SHUTTING_DOWN');
    expect((await closing.atMail({ address: 'a@acme.example', args: false }, session([])))?.code).toBe(
      'SHUTTING_DOWN',
    );
  });

  it('keeps the route each recipient had at RCPT, whatever a reload changes before the next', () => {
    const reloaded = createRouteTable(
      fileRoutes(config).map((workspace) =>
        workspace.identifier === 'open-a'
          ? { ...workspace, whitelistIngestAddresses: ['*@other.example'] }
          : workspace,
      ),
      config.auth.senderAuthentication,
    );
    let table = routes;
    const routed: RoutedRecipients = new WeakMap();
    const live = createSessionChecks({
      settings: config.smtp,
      routes: { lookup: (recipient) => table.route(recipient) },
      routed,
      closing: () => false,
    });
    const first = { address: 'a@ingest.test', args: false as const };
    expect(live.atRcpt(first, session([]))).toBeNull();
    table = reloaded; // SIGHUP between two RCPTs: open-a now has an allow-list
    const accepted = session([]);
    accepted.envelope.rcptTo.push(first);
    expect(live.atRcpt({ address: 'b@ingest.test', args: false }, accepted)).toBeNull();
    expect(routed.get(first)?.config.identifier).toBe('open-a');
    expect(routed.get(first)?.config.whitelistIngestAddresses ?? null).toBeNull();
  });
  it('takes postmaster recipients in a transaction of their own', () => {
    const withPostmaster = createSessionChecks({
      settings: config.smtp,
      routes: { lookup: (recipient) => routes.route(recipient), isPostmaster: (r) => routes.isPostmaster(r) },
      routed: new WeakMap(),
      closing: () => false,
    });
    const rcpt = (recipient: string, accepted: string[]) =>
      withPostmaster.atRcpt({ address: recipient, args: false }, session(accepted))?.code ?? 'accepted';
    expect(rcpt('postmaster@ingest.test', [])).toBe('accepted');
    expect(rcpt('Postmaster', ['postmaster@ingest.test'])).toBe('accepted');
    expect(rcpt('postmaster@ingest.test', ['a@ingest.test'])).toBe('OTHER_ADMISSION_POLICY');
    expect(rcpt('a@ingest.test', ['postmaster@ingest.test'])).toBe('OTHER_ADMISSION_POLICY');
    expect(rcpt('postmaster@elsewhere.example', [])).toBe('RECIPIENT_UNKNOWN');
  });

  it('answers a parameter not advertised before anything else', async () => {
    const withArgs = { address: 'a@ingest.test', args: { NOTIFY: 'NEVER' } };
    expect(checks.atRcpt(withArgs, session([]))?.code).toBe('UNKNOWN_PARAMETER');
    const mail = { address: 'ann@acme.example', args: { FOO: 'bar' } };
    expect((await checks.atMail(mail, session([])))?.code).toBe('UNKNOWN_PARAMETER');
  });

  it('takes one subaddress tag per workspace and transaction', () => {
    const tagged = testConfig({
      workspaces: [
        { identifier: 'inbox', ingestEmail: 'inbox@ingest.test' },
        { identifier: 'other', ingestEmail: 'other@ingest.test' },
      ],
    });
    const table = createRouteTable(fileRoutes(tagged), 'off', { subaddressSeparator: '+' });
    const routed: RoutedRecipients = new WeakMap();
    const tagChecks = createSessionChecks({
      settings: tagged.smtp,
      routes: { lookup: (recipient) => table.route(recipient) },
      routed,
      closing: () => false,
    });
    /** RCPT for each recipient in turn on one transaction: the replies' codes, and what DATA reads. */
    const transaction = (recipients: string[]) => {
      const open = session([]);
      const codes = recipients.map((address) => {
        const rcpt = { address, args: false as const };
        const refusal = tagChecks.atRcpt(rcpt, open);
        if (refusal === null) open.envelope.rcptTo.push(rcpt);
        return refusal?.code ?? 'accepted';
      });
      const tags = open.envelope.rcptTo.map((rcpt) => routed.get(rcpt)?.subaddress ?? null);
      return { codes, tags };
    };
    expect(transaction(['inbox+invoices@ingest.test', 'INBOX+Invoices@ingest.test'])).toEqual({
      codes: ['accepted', 'accepted'],
      tags: ['invoices', 'Invoices'],
    });
    // Another tag, or none, for a workspace already in the transaction: 452 4.5.3, sent again on its own.
    expect(transaction(['inbox+invoices@ingest.test', 'inbox+receipts@ingest.test']).codes).toEqual([
      'accepted',
      'OTHER_SUBADDRESS',
    ]);
    expect(transaction(['inbox@ingest.test', 'inbox+receipts@ingest.test']).codes).toEqual([
      'accepted',
      'OTHER_SUBADDRESS',
    ]);
    expect(transaction(['inbox+receipts@ingest.test', 'inbox@ingest.test']).codes).toEqual([
      'accepted',
      'OTHER_SUBADDRESS',
    ]);
    // Other workspaces keep their own tags.
    expect(
      transaction(['inbox+invoices@ingest.test', 'other+receipts@ingest.test', 'other@ingest.test']),
    ).toEqual({
      codes: ['accepted', 'accepted', 'OTHER_SUBADDRESS'],
      tags: ['invoices', 'receipts'],
    });
  });

  it('takes one document type’s address per workspace and transaction', () => {
    const config = testConfig({ workspaces: [{ identifier: 'inbox', ingestEmail: 'inbox@ingest.test' }] });
    const [inbox] = fileRoutes(config);
    if (inbox === undefined) throw new Error('no workspace');
    const table = createRouteTable(
      [
        inbox,
        { ...inbox, ingestEmail: 'receipts@ingest.test', addressOfDocumentType: 'dt-receipt' },
        { ...inbox, ingestEmail: 'invoices@ingest.test', addressOfDocumentType: 'dt-invoice' },
      ],
      'off',
      { subaddressSeparator: '+' },
    );
    const typeChecks = createSessionChecks({
      settings: config.smtp,
      routes: { lookup: (recipient) => table.route(recipient) },
      routed: new WeakMap(),
      closing: () => false,
    });
    const codes = (recipients: string[]) => {
      const open = session([]);
      return recipients.map((address) => {
        const rcpt = { address, args: false as const };
        const refusal = typeChecks.atRcpt(rcpt, open);
        if (refusal === null) open.envelope.rcptTo.push(rcpt);
        return refusal?.code ?? 'accepted';
      });
    };
    expect(codes(['receipts@ingest.test', 'RECEIPTS@ingest.test'])).toEqual(['accepted', 'accepted']);
    // Another type's address, or the workspace's own, in the same transaction: 452 4.5.3.
    expect(codes(['receipts@ingest.test', 'invoices@ingest.test'])).toEqual(['accepted', 'OTHER_SUBADDRESS']);
    expect(codes(['inbox@ingest.test', 'receipts@ingest.test'])).toEqual(['accepted', 'OTHER_SUBADDRESS']);
    expect(codes(['receipts+a@ingest.test', 'receipts+b@ingest.test'])).toEqual([
      'accepted',
      'OTHER_SUBADDRESS',
    ]);
  });
});
