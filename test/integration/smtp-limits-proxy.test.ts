import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { clientsClosedAfterEach, queuedId, type SmtpSession } from '../../harness/smtp-session.ts';

const client = clientsClosedAfterEach();

/** A connection through the load balancer at 127.0.0.1, for the client at `address`. */
async function proxied(port: number, address: string): Promise<SmtpSession> {
  const session = client(port);
  await session.write(`PROXY TCP4 ${address} 192.0.2.25 40000 25\r\n`);
  return session;
}

describe('PROXY protocol from a listed load balancer', () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startHarness({
      smtp: {
        proxyProtocolFrom: ['127.0.0.1/32'],
        rateLimit: { connectionsPerIp: 2, exempt: ['198.51.100.0/24'] },
      },
    });
  });
  afterAll(async () => harness?.close());

  it('takes the client address from the header into the message record', async () => {
    const session = await proxied(harness.smtpPort, '203.0.113.7');
    expect((await session.reply()).code).toBe(220);
    await session.command('EHLO client.test');
    await session.command('MAIL FROM:<ann@acme.example>');
    await session.command('RCPT TO:<documents@ingest.test>');
    expect((await session.command('DATA')).code).toBe(354);
    const message = await composeMessage({
      attachments: [{ filename: 'p.pdf', content: uniquePdf('proxy') }],
    });
    await session.write(Buffer.concat([message, Buffer.from('\r\n.\r\n')]));
    const reply = await session.reply();
    expect((await harness.record(queuedId(reply))).remoteAddress).toBe('203.0.113.7');
  });

  it('counts the rates for the proxied client, not for the load balancer', async () => {
    // 203.0.113.8 is new; two connections are its limit.
    expect((await (await proxied(harness.smtpPort, '203.0.113.8')).reply()).code).toBe(220);
    expect((await (await proxied(harness.smtpPort, '203.0.113.8')).reply()).code).toBe(220);
    expect((await (await proxied(harness.smtpPort, '203.0.113.8')).reply()).text).toBe(
      '421 4.7.0 too many connections from 203.0.113.8, try again later',
    );
    // Another client behind the same balancer is not held back.
    expect((await (await proxied(harness.smtpPort, '203.0.113.9')).reply()).code).toBe(220);
    // A proxied client in smtp.rateLimit.exempt is never counted.
    for (let i = 0; i < 3; i++) {
      expect((await (await proxied(harness.smtpPort, '198.51.100.9')).reply()).code).toBe(220);
    }
  });

  it('closes a connection from the balancer that lacks the header', async () => {
    const session = client(harness.smtpPort);
    await session.write('EHLO client.test\r\n');
    await session.closed;
    expect(session.transcript).toBe('* BAD Invalid PROXY header\r\n');
  });

  it('closes a connection whose header carries no IP address', async () => {
    const session = client(harness.smtpPort);
    await session.write('PROXY TCP4 mx.evil.example 192.0.2.25 40000 25\r\n');
    await session.closed;
    expect(session.transcript).toBe('* BAD Invalid PROXY header\r\n');
  });
});

describe('PROXY protocol from an address that is not listed', () => {
  let harness: Harness;

  beforeAll(async () => {
    // smtp-server's wait for early talkers, which the test configurations turn off: a header
    // sent at once arrives inside it.
    harness = await startHarness({ smtp: { proxyProtocolFrom: ['10.0.0.0/8'], greetingDelay: 100 } });
  });
  afterAll(async () => harness?.close());

  it('closes the connection on a header sent at once, before the greeting', async () => {
    const session = await proxied(harness.smtpPort, '203.0.113.7');
    expect(await session.rest()).toEqual([{ code: 421, text: '421 gateway.test You talk too soon' }]);
  });

  it('closes the connection on a PROXY line after the greeting', async () => {
    const session = client(harness.smtpPort);
    expect((await session.reply()).code).toBe(220);
    expect(await session.command('PROXY TCP4 203.0.113.7 192.0.2.25 40000 25')).toEqual({
      code: 421,
      text: '421 4.7.0 PROXY protocol is not accepted from this address',
    });
    await session.closed;
  });

  it('serves the peer itself as usual', async () => {
    const session = client(harness.smtpPort);
    expect((await session.reply()).code).toBe(220);
    expect((await session.command('EHLO client.test')).code).toBe(250);
  });
});
