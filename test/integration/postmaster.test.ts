import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { clientsClosedAfterEach, deliver, queuedId } from '../../harness/smtp-session.ts';

const client = clientsClosedAfterEach();

/**
 * Mail for the postmaster (RFC 5321 4.5.1, 4.1.1.3): postmaster@ every domain the gateway
 * serves and <Postmaster> are accepted, the message is kept for the operator (recorded, listed
 * in the console), never uploaded and never refused for what it holds.
 */
describe('mail for the postmaster', () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(async () => harness?.close());

  it.each([
    ['postmaster@ a served domain', 'postmaster@ingest.test', 250],
    ['written in capitals', 'PostMaster@INGEST.TEST', 250],
    ['<Postmaster> without a domain', 'Postmaster', 250],
    ['postmaster@ a domain the gateway does not serve', 'postmaster@elsewhere.example', 550],
  ])('RCPT %s: %i', async (_case, recipient, code) => {
    const session = client(harness.smtpPort);
    await session.reply();
    await session.command('EHLO client.test');
    await session.command('MAIL FROM:<someone@elsewhere.example>');
    expect((await session.command(`RCPT TO:<${recipient}>`)).code).toBe(code);
  });

  it('keeps a message with no attachment from a sender no allow-list admits, and uploads nothing', async () => {
    const uploadsBefore = harness.mock.uploads.length;
    const message = await composeMessage({
      from: 'mallory@nowhere.example',
      to: 'postmaster@ingest.test',
      subject: 'Your server refused my invoice',
      text: 'Why was my mail refused?',
    });
    const { rcpt, data } = await deliver(harness.smtpPort, {
      from: 'mallory@nowhere.example',
      to: ['postmaster@ingest.test', 'Postmaster'],
      message,
    });
    expect(rcpt.map((reply) => reply.code)).toEqual([250, 250]);
    expect(data?.text).toMatch(/^250 2\.0\.0 queued as /);
    const id = queuedId(data);

    const record = (await (await fetch(`${harness.httpUrl}/v1/messages/${id}`)).json()) as Record<
      string,
      unknown
    >;
    expect(record).toMatchObject({
      id,
      keptFor: 'postmaster',
      subject: 'Your server refused my invoice',
      from: 'mallory@nowhere.example',
      envelope: { mailFrom: 'mallory@nowhere.example', rcptTo: ['postmaster@ingest.test', 'Postmaster'] },
      workspaces: [],
      attachments: [],
    });
    const raw = await (await fetch(`${harness.httpUrl}/v1/messages/${id}/raw`)).text();
    expect(raw).toContain('Why was my mail refused?');
    expect(harness.mock.uploads.length).toBe(uploadsBefore);

    // The console lists it and its page says what it is.
    const list = await (await fetch(`${harness.httpUrl}/`)).text();
    expect(list).toMatch(new RegExp(`data-message="${id}"[\\s\\S]*?data-kept-for="postmaster"`));
    const page = await (await fetch(`${harness.httpUrl}/messages/${id}`)).text();
    expect(page).toContain('Kept for the postmaster.');
  });

  it('keeps a message with a document for the postmaster without uploading it', async () => {
    const uploadsBefore = harness.mock.uploads.length;
    const message = await composeMessage({
      to: 'postmaster@ingest.test',
      attachments: [{ filename: 'invoice.pdf', content: uniquePdf('for-the-postmaster') }],
    });
    const { data } = await deliver(harness.smtpPort, { to: ['postmaster@ingest.test'], message });
    const id = queuedId(data);
    const record = (await (await fetch(`${harness.httpUrl}/v1/messages/${id}`)).json()) as Record<
      string,
      unknown
    >;
    expect(record).toMatchObject({ keptFor: 'postmaster', attachments: [] });
    expect(harness.mock.uploads.length).toBe(uploadsBefore);
  });

  it('takes mail for the postmaster and for a workspace only in transactions of their own (452 4.5.3)', async () => {
    const session = client(harness.smtpPort);
    await session.reply();
    await session.command('EHLO client.test');
    await session.command('MAIL FROM:<ann@acme.example>');
    expect((await session.command('RCPT TO:<documents@ingest.test>')).code).toBe(250);
    expect((await session.command('RCPT TO:<postmaster@ingest.test>')).text).toMatch(/^452 4\.5\.3 /);
    await session.command('RSET');
    await session.command('MAIL FROM:<ann@acme.example>');
    expect((await session.command('RCPT TO:<postmaster@ingest.test>')).code).toBe(250);
    expect((await session.command('RCPT TO:<documents@ingest.test>')).text).toMatch(/^452 4\.5\.3 /);
  });
});
