import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { clientsClosedAfterEach, type SmtpSession } from '../../harness/smtp-session.ts';
import { defaultWorkspaces } from '../../harness/test-config.ts';

const client = clientsClosedAfterEach();

/**
 * MAIL and RCPT parameters the gateway does not advertise get 555 5.5.4 (RFC 5321 4.1.1.11),
 * and an address written in UTF-8 needs SMTPUTF8 on MAIL (553 5.6.7, RFC 6531 3.5); an IDN
 * domain written in ASCII (punycode) needs nothing.
 */
describe('SMTP command parameters', () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startHarness({
      workspaces: [...defaultWorkspaces, { identifier: 'ws-books', ingestEmail: 'orders@bücher.example' }],
    });
  });
  afterAll(async () => harness?.close());

  async function greeted(): Promise<SmtpSession> {
    const session = client(harness.smtpPort);
    await session.reply();
    const ehlo = await session.command('EHLO client.test');
    expect(ehlo.text).not.toMatch(/\bDSN\b/);
    expect(ehlo.text).toMatch(/\bSMTPUTF8\b/);
    return session;
  }

  it.each([
    [
      'an unknown parameter',
      'MAIL FROM:<ann@acme.example> FOO=bar',
      /^555 5\.5\.4 MAIL parameter FOO not recognized$/,
    ],
    [
      'DSN RET, not advertised',
      'MAIL FROM:<ann@acme.example> RET=FULL',
      /^555 5\.5\.4 MAIL parameter RET not recognized$/,
    ],
    ['DSN ENVID, not advertised', 'MAIL FROM:<ann@acme.example> ENVID=abc', /^555 5\.5\.4 /],
    ['AUTH=, not offered', 'MAIL FROM:<ann@acme.example> AUTH=<>', /^555 5\.5\.4 /],
    ['SIZE and BODY', 'MAIL FROM:<ann@acme.example> SIZE=1000 BODY=8BITMIME', /^250 /],
    [
      'a UTF-8 sender without SMTPUTF8',
      'MAIL FROM:<jörg@acme.example>',
      /^553 5\.6\.7 <jörg@acme\.example>: /,
    ],
    ['a UTF-8 sender with SMTPUTF8', 'MAIL FROM:<jörg@acme.example> SMTPUTF8', /^250 /],
  ])('MAIL with %s', async (_case, command, reply) => {
    const session = await greeted();
    expect((await session.command(command)).text).toMatch(reply);
  });

  it.each([
    [
      'an unknown parameter',
      'RCPT TO:<documents@ingest.test> FOO',
      /^555 5\.5\.4 RCPT parameter FOO not recognized$/,
    ],
    [
      'DSN NOTIFY, not advertised',
      'RCPT TO:<documents@ingest.test> NOTIFY=SUCCESS',
      /^555 5\.5\.4 RCPT parameter NOTIFY/,
    ],
    [
      'DSN ORCPT, not advertised',
      'RCPT TO:<documents@ingest.test> ORCPT=rfc822;a@b.example',
      /^555 5\.5\.4 /,
    ],
    ['a UTF-8 domain', 'RCPT TO:<orders@bücher.example>', /^553 5\.6\.7 /],
    ['a UTF-8 local part, before the lookup', 'RCPT TO:<dökumente@ingest.test>', /^553 5\.6\.7 /],
    ['the same IDN domain in ASCII', 'RCPT TO:<orders@xn--bcher-kva.example>', /^250 /],
    ['no parameter', 'RCPT TO:<documents@ingest.test>', /^250 /],
  ])('RCPT after MAIL without SMTPUTF8, with %s', async (_case, command, reply) => {
    const session = await greeted();
    expect((await session.command('MAIL FROM:<ann@acme.example>')).code).toBe(250);
    expect((await session.command(command)).text).toMatch(reply);
  });

  it('takes UTF-8 recipients after MAIL with SMTPUTF8', async () => {
    const session = await greeted();
    expect((await session.command('MAIL FROM:<ann@acme.example> SMTPUTF8')).code).toBe(250);
    expect((await session.command('RCPT TO:<orders@bücher.example>')).code).toBe(250);
    expect((await session.command('RCPT TO:<dökumente@ingest.test>')).text).toMatch(/^550 5\.1\.1 /);
  });
});
