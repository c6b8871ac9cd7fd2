import { performance } from 'node:perf_hooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { type Reply, SmtpSession } from '../../harness/smtp-session.ts';

type LogLine = Record<string, unknown>;

const DELAY_AFTER = 3;
const DELAY_MS = 1000;
const MAX_REFUSED = 10;
const GUESSES = 2000;
/** The client smtp.rateLimit.exempt lists; every other loopback address is limited. */
const EXEMPT_CLIENT = '127.0.0.2';

/**
 * Address harvesting (README, "Address harvesting"): a client that guesses recipients is
 * slowed after smtp.refusedRecipientDelayAfter refusals, and disconnected with 421 4.7.0 past
 * smtp.maxRefusedRecipients, counted per client across its connections; the log has one line
 * per session for them.
 */
describe('SMTP address harvesting', () => {
  let harness: Harness;
  const sessions: SmtpSession[] = [];
  const open = (localAddress?: string) => {
    const session = new SmtpSession(harness.smtpPort, '127.0.0.1', localAddress);
    sessions.push(session);
    return session;
  };

  beforeAll(async () => {
    harness = await startHarness({
      smtp: {
        refusedRecipientDelayAfter: DELAY_AFTER,
        refusedRecipientDelay: DELAY_MS,
        maxRefusedRecipients: MAX_REFUSED,
        rateLimit: { exempt: [`${EXEMPT_CLIENT}/32`] },
      },
    });
  });
  afterEach(async () => {
    await Promise.all(sessions.splice(0).map((session) => session.close()));
  });
  afterAll(async () => harness?.close());

  /**
   * Greeting, EHLO and MAIL, then every guess in one write (pipelined, RFC 2920); resolves with
   * the time just before the guesses were written.
   */
  async function guess(session: SmtpSession, count: number): Promise<number> {
    expect((await session.reply()).code).toBe(220);
    expect((await session.command('EHLO harvester.test')).code).toBe(250);
    expect((await session.command('MAIL FROM:<probe@harvester.test>')).code).toBe(250);
    const lines = Array.from({ length: count }, (_, i) => `RCPT TO:<guess${i}@ingest.test>\r\n`);
    const sent = performance.now();
    await session.write(lines.join(''));
    return sent;
  }

  const summaries = (from: number): LogLine[] =>
    harness.logs.lines
      .slice(from)
      .map((line) => JSON.parse(line) as LogLine)
      .filter((line) => line.msg === 'recipients refused in session');

  it('slows the replies past the first refusals, then answers 421 4.7.0 and closes; a new connection stays limited', async () => {
    const from = harness.logs.lines.length;
    const harvester = open();
    const sent = await guess(harvester, GUESSES);
    const replies: Array<Reply & { at: number }> = [];
    for (;;) {
      const reply = await harvester.reply();
      if (reply.code === 0) break;
      replies.push({ ...reply, at: performance.now() });
    }
    await harvester.closed;

    const codes = replies.map((reply) => reply.code);
    expect(codes).toEqual([...Array<number>(MAX_REFUSED).fill(550), 421]);
    expect(replies.at(-1)?.text).toBe(
      '421 4.7.0 too many unknown recipients from 127.0.0.1, try again later',
    );
    // Each refusal past the first DELAY_AFTER waits DELAY_MS, one after the other: the n-th
    // of them cannot arrive sooner than n waits after the guesses were sent (a lower bound;
    // load only adds to it; 5% for timers that fire a little early).
    for (let i = DELAY_AFTER; i < MAX_REFUSED; i++) {
      const waits = i - DELAY_AFTER + 1;
      expect((replies[i]?.at ?? 0) - sent).toBeGreaterThanOrEqual(waits * DELAY_MS * 0.95);
    }

    // A new connection does not reset the count: its first recipient, known or not, gets the 421.
    const again = open();
    expect((await again.reply()).code).toBe(220);
    await again.command('EHLO harvester.test');
    await again.command('MAIL FROM:<probe@harvester.test>');
    expect(await again.command('RCPT TO:<documents@ingest.test>')).toMatchObject({ code: 421 });
    await again.closed;

    // One summary line per session, none per guess.
    await harness.logs.waitFor((line) => line.includes('"disconnected":true'), from);
    const lines = harness.logs.lines.slice(from);
    expect(lines.filter((line) => line.includes('"msg":"recipient refused"'))).toEqual([]);
    expect(summaries(from)[0]).toMatchObject({
      remoteAddress: '127.0.0.1',
      refusedRecipients: MAX_REFUSED,
      firstRefused: [
        'guess0@ingest.test',
        'guess1@ingest.test',
        'guess2@ingest.test',
        'guess3@ingest.test',
        'guess4@ingest.test',
      ],
      disconnected: true,
    });
    expect(lines.filter((line) => line.includes('guess1999'))).toEqual([]);
  });

  it('neither slows nor disconnects a client in smtp.rateLimit.exempt, and logs one line for its guesses', async () => {
    const from = harness.logs.lines.length;
    const exempt = open(EXEMPT_CLIENT);
    await guess(exempt, GUESSES);
    const codes: number[] = [];
    for (let i = 0; i < GUESSES; i++) codes.push((await exempt.reply()).code);
    expect(new Set(codes)).toEqual(new Set([550]));
    // The session goes on: the ingest address is still taken.
    expect((await exempt.command('RCPT TO:<documents@ingest.test>')).code).toBe(250);
    await exempt.close();

    await harness.logs.waitFor((line) => line.includes('"msg":"recipients refused in session"'), from);
    // (The other test's sessions may close within this one's lines.)
    const lines = summaries(from).filter((line) => line.remoteAddress === EXEMPT_CLIENT);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      remoteAddress: EXEMPT_CLIENT,
      refusedRecipients: GUESSES,
      disconnected: false,
    });
  });
  it('still bounds each session on its own while Redis does not answer', async () => {
    const from = harness.logs.lines.length;
    await harness.redis.stop();
    try {
      const harvester = open('127.0.0.3');
      await guess(harvester, 100);
      const codes = (await harvester.rest()).map((reply) => reply.code);
      await harvester.closed;
      expect(codes).toEqual([...Array<number>(MAX_REFUSED).fill(550), 421]);
      // The count was the session's: the rate limiter could not reach Redis.
      expect(harness.logs.lines.slice(from).some((line) => line.includes('rate limits not counted'))).toBe(
        true,
      );
    } finally {
      await harness.redis.start();
    }
  });
});
