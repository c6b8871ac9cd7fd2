import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { composeMessage } from '../../harness/messages.ts';
import { deliver, queuedId } from '../../harness/smtp-session.ts';
import type { MessageRecord } from '../../src/record/message-record.ts';

const LINK = 'https://mail-settings.google.com/mail/vf-%5BANGjdJ8abc%5D-aW52b2ljZXM';

/** Gmail's confirmation as it arrives: no attachment, the code in the subject and the text. */
function gmailConfirmation(to: string, html = false) {
  const text = [
    `ann@gmail.com has requested to automatically forward mail to your email address ${to}.`,
    'Confirmation code: 891234567',
    '',
    'To allow ann@gmail.com to automatically forward mail to your address, please click the link below to confirm the request:',
    '',
    LINK,
  ].join('\n');
  return composeMessage({
    from: 'Gmail Team <forwarding-noreply@google.com>',
    to,
    subject: '(#891234567) Gmail Forwarding Confirmation - Receive Mail from ann@gmail.com',
    ...(html
      ? { text: '', html: `<p>Confirmation code: 891234567</p><p><a href="${LINK}">Confirm</a></p>` }
      : { text }),
  });
}

describe('forwarding confirmations', () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startHarness({
      workspaces: [
        // Refuses unlisted senders: a confirmation is held anyway.
        {
          identifier: 'ws-list',
          ingestEmail: 'list@ingest.test',
          whitelistIngestAddresses: ['*@partner.example'],
        },
        // Takes any sender, and the body as a document: a confirmation is still never uploaded.
        { identifier: 'ws-open', ingestEmail: 'open@ingest.test', bodyAsDocument: 'always' },
      ],
      mockWorkspaces: [{ identifier: 'ws-list', whitelistIngestAddresses: ['*@partner.example'] }],
    });
  }, 60_000);
  afterAll(async () => {
    await harness?.close();
  });

  async function held(to: string, html = false): Promise<MessageRecord> {
    const { data } = await deliver(harness.smtpPort, {
      to: [to],
      message: await gmailConfirmation(to, html),
    });
    expect(data?.text).toMatch(/^250 2\.0\.0 queued as /);
    return harness.record(queuedId(data));
  }

  it.each([
    ['an allow-list that refuses the sender', 'list@ingest.test', 'ws-list'],
    ['an open workspace taking the body as a document', 'open@ingest.test', 'ws-open'],
  ])(
    'holds a Gmail confirmation without an attachment for %s, with its code, link and text',
    async (_name, to, ws) => {
      const record = await held(to);
      expect(record.state).toBe('held');
      expect(record.hold).toMatchObject({
        reason: 'forwarding_confirmation',
        workspace: ws,
        confirmation: { provider: 'Gmail', code: '891234567', link: LINK },
      });
      expect(record.hold?.confirmation?.text).toContain('Confirmation code: 891234567');
      expect(record.attachments).toEqual([]);
      expect(harness.mock.uploads).toEqual([]);
    },
  );

  it('reads the link of an HTML-only confirmation from its href', async () => {
    const record = await held('list@ingest.test', true);
    expect(record.hold?.confirmation).toMatchObject({ code: '891234567', link: LINK });
  });

  it("shows the code, link and text on the console's message page; release uploads nothing and refuses allowSender", async () => {
    const record = await held('list@ingest.test');
    const page = await (await fetch(`${harness.httpUrl}/messages/${record.id}`)).text();
    expect(page).toContain('Gmail forwarding confirmation');
    expect(page).toContain('<code>891234567</code>');
    expect(page).toContain(`href="${LINK}"`);
    const post = (body?: unknown) =>
      fetch(`${harness.httpUrl}/v1/messages/${record.id}/release`, {
        method: 'POST',
        ...(body === undefined
          ? {}
          : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
      });
    const allow = await post({ allowSender: 'address' });
    expect(allow.status).toBe(409);
    expect(harness.mock.workspaces.requests).toEqual([]);
    const released = await post();
    expect(released.status).toBe(200);
    expect(((await released.json()) as { queued: number }).queued).toBe(0);
    expect(harness.mock.uploads).toEqual([]);
  });

  it('still refuses a message from anyone else without an attachment', async () => {
    const message = await composeMessage({
      from: 'Ann <ann@partner.example>',
      to: 'list@ingest.test',
      subject: 'hi',
    });
    const { data } = await deliver(harness.smtpPort, { to: ['list@ingest.test'], message });
    expect(data?.text).toMatch(/^550 5\.6\.0/);
  });
});
