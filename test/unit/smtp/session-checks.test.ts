import type { SMTPServerSession } from 'smtp-server';
import { describe, expect, it } from 'vitest';
import { createRouteTable } from '../../../src/intake/route-table.ts';
import { createSessionChecks, type RoutedRecipients } from '../../../src/smtp/session-checks.ts';
import { testConfig } from '../../support/test-config.ts';

const config = testConfig({
  smtp: { maxRecipients: 3 },
  workspaces: [
    { identifier: 'open-a', ingestEmail: 'a@ingest.test' },
    { identifier: 'open-b', ingestEmail: 'b@ingest.test' },
    { identifier: 'listed', ingestEmail: 'listed@ingest.test', whitelistIngestAddresses: ['*@acme.example'] },
    { identifier: 'authenticated', ingestEmail: 'auth@ingest.test', senderAuthentication: 'aligned' },
  ],
});
const routes = createRouteTable(config.workspaces, config.auth.senderAuthentication);
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
      config.workspaces.map((workspace) =>
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
});
