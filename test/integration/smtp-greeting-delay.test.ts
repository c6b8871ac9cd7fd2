import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { clientsClosedAfterEach } from '../../harness/smtp-session.ts';

/**
 * smtp.greetingDelay, through real sessions: smtp-server waits that long before its banner
 * (patches/smtp-server+3.21.6.patch) and answers a command sent sooner with 421 and a hang-up.
 * No test here asserts a duration; where one compares the delay with something else, the
 * margin is seconds: a client talks at once, half a second in against 5 s, or waits for the
 * banner.
 */

const client = clientsClosedAfterEach();
const tooSoon = [{ code: 421, text: '421 gateway.test You talk too soon' }];

/** A client that sends EHLO as soon as it connects, without waiting for the banner. */
async function earlyTalker(port: number): Promise<ReturnType<typeof client>> {
  const session = client(port);
  await session.write('EHLO client.test\r\n');
  return session;
}

describe('smtp.greetingDelay left at its default', () => {
  let harness: Harness;

  beforeAll(async () => {
    // The test configurations set 0; undefined leaves the key to the schema's default.
    harness = await startHarness({ smtp: { greetingDelay: undefined } });
  });
  afterAll(async () => harness?.close());

  it('is 100 ms, as smtp-server has it', () => {
    expect(harness.config.smtp.greetingDelay).toBe(100);
  });

  it('refuses a client that talks before the banner as an early talker', async () => {
    const session = await earlyTalker(harness.smtpPort);
    expect(await session.rest()).toEqual(tooSoon);
  });
});

describe('smtp.greetingDelay set long, and 0', () => {
  let long: Harness;
  let none: Harness;

  beforeAll(async () => {
    [long, none] = await Promise.all([
      startHarness({ smtp: { greetingDelay: 5000 } }),
      startHarness({ smtp: { greetingDelay: 0 } }),
    ]);
  });
  afterAll(async () => Promise.all([long?.close(), none?.close()]));

  it('refuses a client that talks at once, and one that talks half a second in: the default would have greeted it', async () => {
    expect(await (await earlyTalker(long.smtpPort)).rest()).toEqual(tooSoon);
    const session = client(long.smtpPort);
    // Far past the default's 100 ms, far short of this delay: no stall of the machine turns
    // this into a greeting, only a delay that did not reach smtp-server.
    await delay(500);
    expect(await session.command('EHLO client.test')).toEqual(tooSoon[0]);
  });

  it('greets a client that waits for the banner, and serves it', async () => {
    const session = client(long.smtpPort);
    expect((await session.reply()).text).toMatch(/^220 gateway\.test ESMTP/);
    expect((await session.command('EHLO client.test')).code).toBe(250);
  }, 15_000);

  it('with 0, greets at once: before a session opened earlier on the long delay', async () => {
    const waiting = client(long.smtpPort);
    const session = client(none.smtpPort);
    expect((await session.reply()).text).toMatch(/^220 gateway\.test ESMTP/);
    expect(waiting.transcript).toBe('');
    expect((await session.command('EHLO client.test')).code).toBe(250);
  });
});
