import { connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, type LogSink, startHarness, startTlsHarness } from '../../harness/gateway-harness.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { deliver, queuedId, SmtpSession } from '../../harness/smtp-session.ts';

type LogLine = Record<string, unknown>;

/** The lines from index `from` on with this `msg`, parsed. */
function linesWith(logs: LogSink, msg: string, from = 0): LogLine[] {
  return logs.lines
    .slice(from)
    .map((line) => JSON.parse(line) as LogLine)
    .filter((line) => line.msg === msg);
}

async function lineWith(logs: LogSink, msg: string, from: number): Promise<LogLine> {
  await logs.waitFor((line) => line.includes(`"msg":"${msg}"`), from);
  const [line] = linesWith(logs, msg, from);
  if (!line) throw new Error(`no line ${msg}`);
  return line;
}

const INFO = 30;
const WARN = 40;

/** What the log says about each refusal and each connection a client ends badly: the line is the behaviour. */
describe('SMTP log lines', () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(async () => harness?.close());

  it('logs a Redis outage once when it starts and once when it ends, counting refused transactions', async () => {
    const from = harness.logs.lines.length;
    await harness.redis.stop();
    // The transactions counted are those refused once the outage is noticed: a client greeted
    // at once (smtp.greetingDelay 0) can otherwise finish one before the connection's close is.
    await lineWith(harness.logs, 'Redis unavailable', from);
    try {
      for (const label of ['outage-1', 'outage-2']) {
        const message = await composeMessage({
          to: 'documents@ingest.test',
          attachments: [{ filename: `${label}.pdf`, content: uniquePdf(label) }],
        });
        const { data } = await deliver(harness.smtpPort, { to: ['documents@ingest.test'], message });
        expect(data?.code).toBe(451);
      }
    } finally {
      await harness.redis.start();
    }
    const ended = await lineWith(harness.logs, 'Redis available again', from);
    // Back: the next delivery is taken and uploaded.
    const message = await composeMessage({
      to: 'documents@ingest.test',
      attachments: [{ filename: 'after.pdf', content: uniquePdf('after-outage-log') }],
    });
    const { data } = await deliver(harness.smtpPort, { to: ['documents@ingest.test'], message });
    expect(await harness.settled(queuedId(data), 0)).toBe('completed');
    expect(ended).toMatchObject({ level: INFO, refusedTransactions: 2 });
    const started = linesWith(harness.logs, 'Redis unavailable', from);
    expect(started).toHaveLength(1);
    expect(started[0]?.level).toBe(WARN);
    // The connections' and BullMQ's errors during it are counted, not logged one by one.
    const errors = harness.logs.lines
      .slice(from)
      .map((line) => JSON.parse(line) as LogLine)
      .filter((line) => line.level === 50 && JSON.stringify(line).includes('ECONNREFUSED'));
    expect(errors).toEqual([]);
  });

  it('logs the refused recipients of a session in one line at its end, none one by one', async () => {
    const from = harness.logs.lines.length;
    const { rcpt } = await deliver(harness.smtpPort, {
      from: 'ann@acme.example',
      to: ['nobody@ingest.test', 'noone@ingest.test'],
      message: '',
    });
    expect(rcpt.map((reply) => reply.code)).toEqual([550, 550]);
    const line = await lineWith(harness.logs, 'recipients refused in session', from);
    expect(line).toMatchObject({
      level: INFO,
      remoteAddress: '127.0.0.1',
      refusedRecipients: 2,
      firstRefused: ['nobody@ingest.test', 'noone@ingest.test'],
      disconnected: false,
    });
    expect(linesWith(harness.logs, 'recipient refused', from)).toEqual([]);
  });

  it('logs a message refused after DATA with the client address and the envelope sender', async () => {
    const from = harness.logs.lines.length;
    const { data } = await deliver(harness.smtpPort, {
      from: 'bounce@evil.test',
      to: ['invoices@ingest.test'],
      message: await composeMessage({
        from: 'mallory@evil.test',
        attachments: [{ filename: 'a.pdf', content: uniquePdf('log-refused') }],
      }),
    });
    expect(data?.code).toBe(550);
    const line = await lineWith(harness.logs, 'message refused', from);
    expect(line).toMatchObject({ level: INFO, remoteAddress: '127.0.0.1', mailFrom: 'bounce@evil.test' });
    expect(line.reply).toMatch(/^550 5\.7\.1 sender mallory@evil\.test is not admitted/);
  });

  it('logs a client that resets its connection mid-transaction at info, without a stack', async () => {
    const from = harness.logs.lines.length;
    const client = new SmtpSession(harness.smtpPort);
    await client.reply();
    await client.command('EHLO client.test');
    await client.command('MAIL FROM:<ann@acme.example>');
    await client.command('RCPT TO:<documents@ingest.test>');
    expect((await client.command('DATA')).code).toBe(354);
    await client.write('Subject: cut short\r\n\r\nhalf a message');
    client.socket.resetAndDestroy();
    const line = await lineWith(harness.logs, 'client disconnected', from);
    expect(line).toMatchObject({ level: INFO, remoteAddress: '127.0.0.1', code: 'ECONNRESET' });
    expect(JSON.stringify(line)).not.toContain('stack');
    expect(linesWith(harness.logs, 'smtp server error', from)).toEqual([]);
  });
});

describe('SMTP log lines with STARTTLS required', () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startTlsHarness();
  });
  afterAll(async () => {
    await harness?.close();
  });

  it('logs a sender refused at MAIL with the client address and that sender', async () => {
    const from = harness.logs.lines.length;
    const client = new SmtpSession(harness.smtpPort);
    try {
      await client.reply();
      await client.command('EHLO client.test');
      expect((await client.command('MAIL FROM:<ann@acme.example>')).code).toBe(530);
    } finally {
      await client.close();
    }
    const line = await lineWith(harness.logs, 'sender refused', from);
    expect(line).toMatchObject({
      level: INFO,
      stage: 'MAIL',
      remoteAddress: '127.0.0.1',
      mailFrom: 'ann@acme.example',
      reply: '530 5.7.0 must issue a STARTTLS command first',
    });
  });

  it('logs a failed TLS handshake at info with the client address and why, without a stack', async () => {
    const from = harness.logs.lines.length;
    const client = new SmtpSession(harness.smtpPort);
    await client.reply();
    await client.command('EHLO client.test');
    expect((await client.command('STARTTLS')).code).toBe(220);
    // A client that offers only TLS 1.0, which smtp.tls refuses (TLS 1.2 at least).
    const tls = tlsConnect({
      socket: client.socket,
      rejectUnauthorized: false,
      minVersion: 'TLSv1',
      maxVersion: 'TLSv1',
    });
    tls.on('error', () => undefined);
    const line = await lineWith(harness.logs, 'TLS handshake failed', from);
    tls.destroy();
    await client.closed;
    expect(line).toMatchObject({ level: INFO, remoteAddress: '127.0.0.1' });
    expect(typeof line.reason).toBe('string');
    expect(JSON.stringify(line)).not.toContain('stack');
    expect(linesWith(harness.logs, 'smtp server error', from)).toEqual([]);
  });
});
