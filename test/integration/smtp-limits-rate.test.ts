import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { apiKey, type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { readyzAnswers } from '../../harness/http-state.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { clientsClosedAfterEach, deliver, queuedId } from '../../harness/smtp-session.ts';
import { type Gateway, startGateway } from '../../src/gateway.ts';

const client = clientsClosedAfterEach();
const WINDOW_MS = 3_600_000;

/**
 * Rates kept in Redis under redis.prefix: per client address at connect (421 4.7.0), per
 * client address and per envelope sender at MAIL (450 4.7.1). Loopback is exempt by default,
 * so these tests exempt nothing.
 */
describe('SMTP rate limits', () => {
  let harness: Harness;
  let redis: Redis;

  beforeAll(async () => {
    harness = await startHarness({
      redis: { prefix: 'limits' },
      // An hour's window: a test that straddles a window's edge weighs its earlier counts by
      // how far the new window has got, under a minute's window enough to let one more through.
      smtp: {
        rateLimit: {
          window: WINDOW_MS,
          connectionsPerIp: 3,
          messagesPerIp: 6,
          messagesPerSender: 2,
          exempt: [],
        },
      },
    });
    redis = new Redis(harness.redis.url, { maxRetriesPerRequest: null });
    redis.on('error', () => undefined);
  });
  afterAll(async () => {
    redis?.disconnect();
    await harness?.close();
  });

  // Each test starts with no counts: the rate keys are all under `limits:rate:`.
  beforeEach(async () => {
    const keys = await redis.keys('limits:rate:*');
    if (keys.length > 0) await redis.del(...keys);
  });

  it('refuses the connection past connectionsPerIp with 421 4.7.0 and closes it', async () => {
    for (let i = 0; i < 3; i++) expect((await client(harness.smtpPort).reply()).code).toBe(220);
    const refused = client(harness.smtpPort);
    expect(await refused.reply()).toEqual({
      code: 421,
      text: '421 4.7.0 too many connections from 127.0.0.1, try again later',
    });
    await refused.closed;
  });

  it('keeps the counts in Redis under redis.prefix, each counter with its own hash tag', async () => {
    await client(harness.smtpPort).reply();
    const keys = await redis.keys('limits:rate:*');
    expect(keys).toEqual([expect.stringMatching(/^limits:rate:\{conn:127\.0\.0\.1\}:\d+$/)]);
    expect(await redis.pttl(keys[0] ?? '')).toBeGreaterThan(WINDOW_MS);
  });

  it('refuses MAIL past messagesPerSender, then past messagesPerIp, with 450 4.7.1', async () => {
    const session = client(harness.smtpPort);
    await session.reply();
    await session.command('EHLO client.test');
    const mail = async (sender: string) => {
      const reply = await session.command(`MAIL FROM:<${sender}>`);
      await session.command('RSET');
      return reply.text;
    };
    const accepted = async (sender: string, label: string) => {
      expect((await session.command(`MAIL FROM:<${sender}>`)).code).toBe(250);
      expect((await session.command('RCPT TO:<documents@ingest.test>')).code).toBe(250);
      expect((await session.command('DATA')).code).toBe(354);
      const message = await composeMessage({
        attachments: [{ filename: `${label}.pdf`, content: uniquePdf(label) }],
      });
      await session.write(
        `${message.toString('latin1').replace(/\r?\n/g, '\r\n').replace(/^\./gm, '..')}\r\n.\r\n`,
      );
      expect((await session.reply()).code).toBe(250);
    };
    // The envelope sender is not authenticated: MAILs that never become messages do not use
    // up its quota (else anyone could lock a real sender out), accepted messages do.
    expect(await mail('ann@acme.example')).toBe('250 Accepted');
    expect(await mail('ann@acme.example')).toBe('250 Accepted');
    await accepted('ann@acme.example', 'rate-1');
    // Senders are counted without case.
    await accepted('ANN@acme.example', 'rate-2');
    expect(await mail('ann@acme.example')).toBe(
      '450 4.7.1 too many messages from <ann@acme.example>, try again later',
    );
    // Every MAIL counted for the client, the refused one too: this is its sixth.
    expect(await mail('bob@acme.example')).toBe('250 Accepted');
    expect(await mail('carol@acme.example')).toBe(
      '450 4.7.1 too many messages from 127.0.0.1, try again later',
    );
  });

  it('gives the null sender no per-sender quota', async () => {
    const session = client(harness.smtpPort);
    await session.reply();
    await session.command('EHLO client.test');
    for (let i = 0; i < 3; i++) {
      expect((await session.command('MAIL FROM:<>')).text).toBe('250 Accepted');
      await session.command('RSET');
    }
  });

  it('holds across instances sharing Redis', async () => {
    const second: Gateway = await startGateway({
      config: harness.config,
      role: 'smtp',
      logger: harness.logger,
      redisUrl: harness.redis.url,
      apiBaseUrl: 'http://127.0.0.1:1',
      apiKey,
    });
    try {
      const port = second.smtpPort ?? 0;
      expect((await client(harness.smtpPort).reply()).code).toBe(220);
      expect((await client(port).reply()).code).toBe(220);
      expect((await client(harness.smtpPort).reply()).code).toBe(220);
      expect((await client(port).reply()).code).toBe(421);
    } finally {
      await client.closeAll();
      await second.close();
    }
  });

  it('lets clients through when Redis is down (fail open); DATA then answers 451 4.3.0', async () => {
    await harness.redis.stop();
    try {
      const session = client(harness.smtpPort);
      expect((await session.reply()).code).toBe(220);
      await session.command('EHLO client.test');
      expect((await session.command('MAIL FROM:<ann@acme.example>')).code).toBe(250);
      expect((await session.command('RCPT TO:<documents@ingest.test>')).code).toBe(250);
      expect((await session.command('DATA')).code).toBe(354);
      const message = await composeMessage({
        attachments: [{ filename: 'o.pdf', content: uniquePdf('open') }],
      });
      await session.write(Buffer.concat([message, Buffer.from('\r\n.\r\n')]));
      expect((await session.reply()).text).toMatch(/^451 4\.3\.0 /);
      expect(
        harness.logs.lines.filter((line) => line.includes('rate limits not counted (Redis unavailable)')),
      ).toHaveLength(1);
    } finally {
      await harness.redis.start();
    }
    // Once the gateway is back on Redis, the next delivery is taken (this Redis kept no
    // counts over the restart) and the rates are counted again.
    await readyzAnswers(harness.httpUrl, 200);
    const message = await composeMessage({
      attachments: [{ filename: 'b.pdf', content: uniquePdf('back') }],
    });
    const accepted = (await deliver(harness.smtpPort, { to: ['documents@ingest.test'], message })).data;
    expect(accepted?.text).toMatch(/^250 2\.0\.0 queued as /);
    expect(await harness.settled(queuedId(accepted), 0)).toBe('completed');
    expect(await redis.keys('limits:rate:*')).not.toEqual([]);
    expect(harness.logs.lines.some((line) => line.includes('rate limits counted again'))).toBe(true);
  });
});
