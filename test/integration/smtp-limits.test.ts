import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { clientsClosedAfterEach, queuedId, SmtpSession } from '../../harness/smtp-session.ts';
import { defaultWorkspaces } from '../../harness/test-config.ts';

/** Every client a test opens, closed after it whatever the test did. */
const client = clientsClosedAfterEach();

/**
 * A whole transaction for an open workspace, written without waiting for any reply (as a
 * client that ignores a refusal would): had the gateway read it, a PDF would be uploaded.
 */
async function blindTransaction(label: string): Promise<Buffer> {
  const message = await composeMessage({
    attachments: [{ filename: `${label}.pdf`, content: uniquePdf(label) }],
  });
  return Buffer.concat([
    Buffer.from('EHLO client.test\r\nMAIL FROM:<ann@acme.example>\r\nRCPT TO:<documents@ingest.test>\r\n'),
    Buffer.from('DATA\r\n'),
    Buffer.from(message.toString('latin1').replace(/^\./gm, '..'), 'latin1'),
    Buffer.from('\r\n.\r\n'),
  ]);
}

/**
 * The blind transaction `label` was not taken: no message accepted since log line `from`
 * (the gateway logs that before its 250, so no upload can follow later) and the mock API got
 * no upload of its file.
 */
function expectNothingTaken(harness: Harness, from: number, label: string): void {
  expect(harness.logs.lines.slice(from).filter((line) => line.includes('"msg":"message accepted"'))).toEqual(
    [],
  );
  expect(harness.mock.uploads.filter((upload) => upload.file?.fileName === `${label}.pdf`)).toEqual([]);
}

/** Connection and transaction limits of the SMTP edge, each attacked over a real session. */
describe('SMTP limits', () => {
  let harness: Harness;

  beforeAll(async () => {
    // A third workspace, so that the recipient past maxRecipients is one that would get uploads.
    harness = await startHarness({
      smtp: { maxClients: 2, maxRecipients: 2 },
      workspaces: [...defaultWorkspaces, { identifier: 'ws-third', ingestEmail: 'third@ingest.test' }],
    });
  });
  afterAll(async () => harness?.close());

  it('answers the connection past maxClients with 421 and closes it; a freed slot is taken again', async () => {
    const first = client(harness.smtpPort);
    const second = client(harness.smtpPort);
    expect((await first.reply()).code).toBe(220);
    expect((await second.reply()).code).toBe(220);

    const from = harness.logs.lines.length;
    const third = client(harness.smtpPort);
    expect((await third.reply()).text).toBe(
      '421 gateway.test Too many connected clients, try again in a moment',
    );
    // A client that goes on regardless is not read.
    await third.write(await blindTransaction('max-clients'));
    await third.closed;
    expect(third.transcript).toBe('421 gateway.test Too many connected clients, try again in a moment\r\n');
    expectNothingTaken(harness, from, 'max-clients');

    expect((await first.command('QUIT')).code).toBe(221);
    await first.closed;
    const fourth = client(harness.smtpPort);
    expect((await fourth.reply()).code).toBe(220);
  });

  it('answers the recipient past maxRecipients with 452 4.5.3, a repeated one counting once', async () => {
    const session = client(harness.smtpPort);
    await session.reply();
    await session.command('EHLO client.test');
    await session.command('MAIL FROM:<ann@acme.example>');
    expect((await session.command('RCPT TO:<documents@ingest.test>')).code).toBe(250);
    expect((await session.command('RCPT TO:<third@ingest.test>')).code).toBe(250);
    expect((await session.command('RCPT TO:<DOCUMENTS@ingest.test>')).code).toBe(250);
    expect((await session.command('RCPT TO:<invoices@ingest.test>')).text).toBe(
      '452 4.5.3 too many recipients: at most 2 per message; send the rest in another transaction',
    );
    await session.close();

    // The transaction goes on with the recipients it has.
    const smtp = new SmtpSession(harness.smtpPort);
    try {
      await smtp.reply();
      await smtp.command('EHLO client.test');
      await smtp.command('MAIL FROM:<ann@acme.example>');
      await smtp.command('RCPT TO:<documents@ingest.test>');
      await smtp.command('RCPT TO:<third@ingest.test>');
      expect((await smtp.command('RCPT TO:<invoices@ingest.test>')).code).toBe(452);
      const message = await composeMessage({
        attachments: [{ filename: 'r.pdf', content: uniquePdf('recipients') }],
      });
      const id = queuedId(await smtp.data(message));
      const record = await harness.record(id);
      expect(record.envelope.rcptTo).toEqual(['documents@ingest.test', 'third@ingest.test']);
      // The refused recipient's workspace gets nothing: one upload for each of the other two.
      expect(record.workspaces.map((workspace) => workspace.identifier)).toEqual(['ws-open', 'ws-third']);
      expect(record.attachments.map((entry) => entry.workspace)).toEqual(['ws-open', 'ws-third']);
      expect(await Promise.all([harness.settled(id, 0), harness.settled(id, 1)])).toEqual([
        'completed',
        'completed',
      ]);
      expect(
        harness.mock.uploads
          .filter((upload) => upload.file?.fileName === 'r.pdf')
          .map((upload) => upload.fields.workspace?.[0])
          .sort(),
      ).toEqual(['ws-open', 'ws-third']);
    } finally {
      await smtp.close();
    }
  });

  it('takes a command line of 512 octets and answers a longer one with 500 5.5.2, then closes', async () => {
    const from = harness.logs.lines.length;
    const session = client(harness.smtpPort);
    await session.reply();
    // NOOP ignores its argument: 510 octets and CRLF is the longest line there is.
    expect((await session.command(`NOOP ${'x'.repeat(505)}`)).text).toBe('250 OK');
    // The over-long line and a whole transaction behind it, in one write: none of it is read.
    await session.write(
      Buffer.concat([Buffer.from(`NOOP ${'x'.repeat(506)}\r\n`), await blindTransaction('line-too-long')]),
    );
    expect(await session.rest()).toEqual([
      {
        code: 500,
        text: '500 5.5.2 line too long: a command line is at most 512 octets (RFC 5321 4.5.3.1.4)',
      },
    ]);
    expectNothingTaken(harness, from, 'line-too-long');
  });

  it('does not buffer an endless line: 500 5.5.2, then the connection closes long before it ends', async () => {
    const session = client(harness.smtpPort);
    await session.reply();
    // Up to 64 MiB without a line break: the server must answer and hang up early on.
    const chunk = Buffer.alloc(64 * 1024, 'A');
    let written = 0;
    while (session.socket.writable && written < 64 * 1024 * 1024) {
      await session.write(chunk);
      written += chunk.length;
    }
    await session.closed;
    expect(session.transcript).toContain(
      '500 5.5.2 line too long: a command line is at most 512 octets (RFC 5321 4.5.3.1.4)\r\n',
    );
    expect(written).toBeLessThan(64 * 1024 * 1024);
  });

  it('offers neither AUTH, XCLIENT, XFORWARD nor (without a certificate) STARTTLS, and refuses them', async () => {
    const session = client(harness.smtpPort);
    await session.reply();
    const ehlo = await session.command('EHLO client.test');
    expect(ehlo.code).toBe(250);
    for (const keyword of ['AUTH', 'XCLIENT', 'XFORWARD', 'STARTTLS']) {
      expect(ehlo.text).not.toMatch(new RegExp(`^250[- ]${keyword}\\b`, 'm'));
    }
    for (const command of [
      'AUTH PLAIN AGFubkBhY21lLmV4YW1wbGUAc2VjcmV0',
      'XCLIENT ADDR=203.0.113.9 NAME=spoofed.example',
      'XFORWARD ADDR=203.0.113.9',
      'STARTTLS',
    ]) {
      expect((await session.command(command)).text).toBe('500 Error: command not recognized');
    }
    await session.close();
  });

  it('records the real peer even after an XCLIENT attempt', async () => {
    const smtp = new SmtpSession(harness.smtpPort);
    try {
      await smtp.reply();
      await smtp.command('EHLO client.test');
      await smtp.command('XCLIENT ADDR=203.0.113.9');
      await smtp.command('MAIL FROM:<ann@acme.example>');
      await smtp.command('RCPT TO:<documents@ingest.test>');
      const message = await composeMessage({
        attachments: [{ filename: 'x.pdf', content: uniquePdf('xclient') }],
      });
      const reply = await smtp.data(message);
      expect((await harness.record(queuedId(reply))).remoteAddress).toBe('127.0.0.1');
    } finally {
      await smtp.close();
    }
  });
});

describe('SMTP session deadline', () => {
  let harness: Harness;

  beforeAll(async () => {
    // The idle timeout is a minute, so only the deadline can end these sessions in the test's
    // time; 5 s, so that the commands before it are answered well before it even on busy cores.
    harness = await startHarness({ smtp: { sessionTimeout: 5000, socketTimeout: 60000 } });
  });
  afterAll(async () => harness?.close());

  const expired = { code: 421, text: '421 4.4.2 session longer than 5 s, closing; try again later' };

  it('ends a session that outlives smtp.sessionTimeout with 421 4.4.2, unasked', async () => {
    const session = client(harness.smtpPort);
    expect((await session.reply()).code).toBe(220);
    expect((await session.command('EHLO client.test')).code).toBe(250);
    expect(await session.reply()).toEqual(expired);
    await session.closed;
  });

  it('ends a session that trickles DATA, and keeps nothing of the message', async () => {
    const session = client(harness.smtpPort);
    await session.reply();
    await session.command('EHLO client.test');
    await session.command('MAIL FROM:<ann@acme.example>');
    await session.command('RCPT TO:<documents@ingest.test>');
    expect((await session.command('DATA')).code).toBe(354);
    await session.write('Subject: slow\r\n\r\n%PDF-1.4\r\n');
    expect(await session.reply()).toEqual(expired);
    await session.closed;
    expect(harness.mock.uploads).toEqual([]);
    expect(harness.logs.lines.some((line) => line.includes('"msg":"message accepted"'))).toBe(false);
  });
});
