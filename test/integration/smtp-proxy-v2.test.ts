import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { proxyV2Header, tlv } from '../../harness/proxy-v2.ts';
import { clientsClosedAfterEach, queuedId, SmtpSession } from '../../harness/smtp-session.ts';

const client = clientsClosedAfterEach();

type LogLine = { level: number; msg: string; [field: string]: unknown };

function linesFrom(harness: Harness, from: number): LogLine[] {
  return harness.logs.lines.slice(from).map((line) => JSON.parse(line) as LogLine);
}

/** A whole transaction after the greeting; resolves with the record's remote address. */
async function recordedAddress(
  harness: Harness,
  session: SmtpSession,
  label: string,
): Promise<string | null> {
  expect((await session.reply()).code).toBe(220);
  expect((await session.command('EHLO client.test')).code).toBe(250);
  expect((await session.command('MAIL FROM:<ann@acme.example>')).code).toBe(250);
  expect((await session.command('RCPT TO:<documents@ingest.test>')).code).toBe(250);
  const message = await composeMessage({
    attachments: [{ filename: `${label}.pdf`, content: uniquePdf(label) }],
  });
  const reply = await session.data(message);
  return (await harness.record(queuedId(reply))).remoteAddress;
}

describe('PROXY protocol v2 from a listed load balancer', () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startHarness({ smtp: { proxyProtocolFrom: ['127.0.0.1/32'] } });
  });
  afterAll(async () => harness?.close());

  it('takes a TCP4 client address into the record and the refusal log', async () => {
    const session = client(harness.smtpPort);
    await session.write(proxyV2Header({ source: { address: '203.0.113.7', port: 40000 } }));
    expect(await recordedAddress(harness, session, 'v2-tcp4')).toBe('203.0.113.7');

    const from = harness.logs.lines.length;
    expect((await session.command('MAIL FROM:<ann@acme.example>')).code).toBe(250);
    expect((await session.command('RCPT TO:<nobody@ingest.test>')).code).toBe(550);
    await session.command('QUIT');
    // The session's refused recipients are logged in one line at its end.
    await harness.logs.waitFor((line) => line.includes('"msg":"recipients refused in session"'), from);
    const refused = linesFrom(harness, from).find((line) => line.msg === 'recipients refused in session');
    expect(refused?.remoteAddress).toBe('203.0.113.7');
  });

  it('takes a TCP6 client address, in its short form', async () => {
    const session = client(harness.smtpPort);
    await session.write(proxyV2Header({ source: { address: '2001:db8:0:0:0:0:0:7', port: 40000 } }));
    expect(await recordedAddress(harness, session, 'v2-tcp6')).toBe('2001:db8::7');
  });

  it('skips the TLVs a balancer adds (an NLB’s endpoint id, a CRC)', async () => {
    const session = client(harness.smtpPort);
    const tlvs = Buffer.concat([
      tlv(0xea, Buffer.from('\x01vpce-0123456789abcdef0')),
      tlv(0x03, Buffer.alloc(4)),
    ]);
    await session.write(proxyV2Header({ source: { address: '198.51.100.4', port: 5000 }, tlvs }));
    expect(await recordedAddress(harness, session, 'v2-tlvs')).toBe('198.51.100.4');
  });

  it('reads a header cut across TCP segments, and the SMTP bytes right behind it', async () => {
    const session = client(harness.smtpPort);
    const header = proxyV2Header({ source: { address: '203.0.113.9', port: 40000 } });
    await session.write(header.subarray(0, 5));
    await session.write(header.subarray(5, 20));
    await session.write(header.subarray(20));
    expect(await recordedAddress(harness, session, 'v2-split')).toBe('203.0.113.9');
  });

  it('still reads a v1 line, also cut across TCP segments', async () => {
    const session = client(harness.smtpPort);
    await session.write('PRO');
    await session.write('XY TCP4 203.0.113.10 192.0.2.25 40000 25\r\n');
    expect(await recordedAddress(harness, session, 'v1-split')).toBe('203.0.113.10');
  });

  it('serves a LOCAL connection (the balancer’s health check) as the balancer, with no refusal or error logged', async () => {
    const from = harness.logs.lines.length;
    const session = client(harness.smtpPort);
    await session.write(proxyV2Header({ command: 'LOCAL' }));
    expect(await recordedAddress(harness, session, 'v2-local')).toBe('127.0.0.1');
    // The usual check: the header, then the connection closed without a word.
    const check = client(harness.smtpPort);
    await check.write(proxyV2Header({ command: 'LOCAL' }));
    check.socket.end();
    await check.closed;
    const warnings = linesFrom(harness, from).filter((line) => line.level >= 40 || /refused/.test(line.msg));
    expect(warnings).toEqual([]);
  });

  it('keeps the connection’s address for a PROXY header of no TCP family (UNSPEC)', async () => {
    const session = client(harness.smtpPort);
    await session.write(proxyV2Header({ familyAndTransport: 0x00 }));
    expect(await recordedAddress(harness, session, 'v2-unspec')).toBe('127.0.0.1');
  });

  it.each([
    ['version 1 in the version byte', proxyV2Header({ versionAndCommand: 0x11 }), 'PROXY version 1'],
    [
      'an address block too short for TCP4',
      Buffer.concat([proxyV2Header({ familyAndTransport: 0x11, length: 4 }), Buffer.alloc(4)]),
      'PROXY v2 address block of 4 bytes, 12 needed',
    ],
    [
      'a broken signature',
      Buffer.from('\r\n\r\n\0\r\nQUIZ\nEHLO client.test\r\n'),
      'not a PROXY v2 signature',
    ],
    [
      'a length over the cap, before its bytes arrive',
      proxyV2Header({ familyAndTransport: 0x11, length: 60_000 }),
      'PROXY v2 header of 60000 bytes, over 4096',
    ],
  ])('refuses a malformed v2 header (%s), closes and logs why', async (_name, bytes, reason) => {
    const from = harness.logs.lines.length;
    const session = client(harness.smtpPort);
    await session.write(bytes);
    await session.closed;
    expect(session.transcript).toBe('* BAD Invalid PROXY header\r\n');
    const refused = linesFrom(harness, from).filter((line) => line.msg === 'PROXY header refused');
    expect(refused).toMatchObject([{ level: 40, remoteAddress: '127.0.0.1', reason }]);
  });
});

describe('PROXY protocol v2 from a balancer that stops mid-header', () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startHarness({ smtp: { proxyProtocolFrom: ['127.0.0.1/32'], socketTimeout: 1000 } });
  });
  afterAll(async () => harness?.close());

  it('closes the connection after smtp.socketTimeout, quietly', async () => {
    const from = harness.logs.lines.length;
    const session = client(harness.smtpPort);
    await session.write(proxyV2Header({ source: { address: '203.0.113.7', port: 40000 } }).subarray(0, 20));
    await session.closed;
    expect(session.transcript).toBe('');
    expect(linesFrom(harness, from).filter((line) => line.level >= 40)).toEqual([]);
  });
});

describe('PROXY protocol v2 on a dual-stack listener', () => {
  let harness: Harness;

  beforeAll(async () => {
    // Listening on ::, an IPv4 peer is ::ffff:127.0.0.1; the list names it as 127.0.0.1.
    harness = await startHarness({ smtp: { host: '::', proxyProtocolFrom: ['127.0.0.1/32', '::1/128'] } });
  });
  afterAll(async () => harness?.close());

  it('trusts an IPv4 balancer by its IPv4 network', async () => {
    const session = client(harness.smtpPort);
    await session.write(proxyV2Header({ source: { address: '203.0.113.11', port: 40000 } }));
    expect(await recordedAddress(harness, session, 'v2-dual-stack')).toBe('203.0.113.11');
  });

  it('trusts an IPv6 balancer by its IPv6 network', async () => {
    const session = new SmtpSession(harness.smtpPort, '::1');
    try {
      await session.write(proxyV2Header({ source: { address: '2001:db8::12', port: 40000 } }));
      expect(await recordedAddress(harness, session, 'v2-ipv6-balancer')).toBe('2001:db8::12');
    } finally {
      await session.close();
    }
  });
});

describe('PROXY protocol v2 from an address that is not listed', () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startHarness({ smtp: { proxyProtocolFrom: ['10.0.0.0/8'], greetingDelay: 100 } });
  });
  afterAll(async () => harness?.close());

  it('closes the connection on a header sent at once, before the greeting', async () => {
    const session = client(harness.smtpPort);
    await session.write(proxyV2Header({ source: { address: '203.0.113.7', port: 40000 } }));
    expect(await session.rest()).toEqual([{ code: 421, text: '421 gateway.test You talk too soon' }]);
  });

  it('reads a header after the greeting as SMTP lines: the QUIT inside its signature ends the session', async () => {
    const session = client(harness.smtpPort);
    expect((await session.reply()).code).toBe(220);
    const header = proxyV2Header({ source: { address: '203.0.113.7', port: 40000 } });
    await session.write(Buffer.concat([header, Buffer.from('EHLO client.test\r\n')]));
    await session.closed;
    expect(session.transcript).not.toContain('250');
    expect(session.transcript).toMatch(/\r\n221 Bye\r\n$/);
  });
});
