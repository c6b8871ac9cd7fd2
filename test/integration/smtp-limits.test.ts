import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../support/gateway-harness.ts';
import { composeMessage, uniquePdf } from '../support/messages.ts';
import { RawSmtpClient } from '../support/raw-smtp-client.ts';
import { queuedId, SmtpSession } from '../support/smtp-session.ts';

/** Every client a test opens, closed after it whatever the test did. */
const open: RawSmtpClient[] = [];
function client(port: number): RawSmtpClient {
  const created = new RawSmtpClient(port);
  open.push(created);
  return created;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((item) => item.close()));
});

/** Connection and transaction limits of the SMTP edge, each attacked over a real session. */
describe('SMTP limits', () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startHarness({ smtp: '  maxClients: 2\n  maxRecipients: 2' });
  });
  afterAll(async () => harness?.close());

  it('answers the connection past maxClients with 421 and closes it; a freed slot is taken again', async () => {
    const first = client(harness.smtpPort);
    const second = client(harness.smtpPort);
    expect((await first.reply()).code).toBe(220);
    expect((await second.reply()).code).toBe(220);

    const third = client(harness.smtpPort);
    expect((await third.reply()).text).toBe(
      '421 gateway.test Too many connected clients, try again in a moment',
    );
    await third.closed;

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
    expect((await session.command('RCPT TO:<invoices@ingest.test>')).code).toBe(250);
    expect((await session.command('RCPT TO:<DOCUMENTS@ingest.test>')).code).toBe(250);
    expect((await session.command('RCPT TO:<third@ingest.test>')).text).toBe(
      '452 4.5.3 too many recipients: at most 2 per message; send the rest in another transaction',
    );
    await session.close();

    // The transaction goes on with the recipients it has.
    const smtp = new SmtpSession(harness.smtpPort);
    try {
      await smtp.greeting;
      await smtp.command('EHLO client.test');
      await smtp.command('MAIL FROM:<ann@acme.example>');
      await smtp.command('RCPT TO:<documents@ingest.test>');
      await smtp.command('RCPT TO:<invoices@ingest.test>');
      expect((await smtp.command('RCPT TO:<third@ingest.test>')).code).toBe(452);
      const message = await composeMessage({
        attachments: [{ filename: 'r.pdf', content: uniquePdf('recipients') }],
      });
      const reply = await smtp.data(message);
      expect((await harness.record(queuedId(reply))).envelope.rcptTo).toEqual([
        'documents@ingest.test',
        'invoices@ingest.test',
      ]);
    } finally {
      await smtp.close();
    }
  });

  it('takes a command line of 512 octets and answers a longer one with 500 5.5.2, then closes', async () => {
    const session = client(harness.smtpPort);
    await session.reply();
    // NOOP ignores its argument: 510 octets and CRLF is the longest line there is.
    expect((await session.command(`NOOP ${'x'.repeat(505)}`)).text).toBe('250 OK');
    expect((await session.command(`NOOP ${'x'.repeat(506)}`)).text).toBe(
      '500 5.5.2 line too long: a command line is at most 512 octets (RFC 5321 4.5.3.1.4)',
    );
    await session.closed;
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
      await smtp.greeting;
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
    // The idle timeout is a minute, so only the deadline can end these sessions in the test's time.
    harness = await startHarness({ smtp: '  sessionTimeout: 1000\n  socketTimeout: 60000' });
  });
  afterAll(async () => harness?.close());

  it('ends a session that outlives smtp.sessionTimeout with 421 4.4.2, unasked', async () => {
    const session = client(harness.smtpPort);
    expect((await session.reply()).code).toBe(220);
    expect((await session.command('EHLO client.test')).code).toBe(250);
    expect(await session.reply()).toEqual({
      code: 421,
      text: '421 4.4.2 session longer than 1 s, closing; try again later',
    });
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
    expect((await session.reply()).text).toBe('421 4.4.2 session longer than 1 s, closing; try again later');
    await session.closed;
    expect(harness.mock.uploads).toEqual([]);
    expect(harness.logs.lines.some((line) => line.includes('"msg":"message accepted"'))).toBe(false);
  });
});
