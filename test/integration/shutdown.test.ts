import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { queuedId, SmtpSession } from '../../harness/smtp-session.ts';
import { createKeySpace } from '../../src/record/keys.ts';
import { rawCopyLength } from '../../src/store/raw-copy.ts';

/** Stopping: no new mail (421), the transaction in DATA still gets its reply, and what got 250 stays in Redis. */
describe('shutdown', () => {
  let harness: Harness;

  beforeAll(async () => {
    // A close deadline out of reach: the session in DATA ends with its reply, not at the
    // deadline, however long the test's steps take on busy cores.
    harness = await startHarness({ smtp: { closeTimeout: 600_000 } });
  });
  afterAll(async () => harness?.close());

  it('answers 421 4.3.2 to new sessions and transactions while a session in DATA finishes with 250', async () => {
    const message = (
      await composeMessage({ attachments: [{ filename: 'last.pdf', content: uniquePdf('shutdown') }] })
    ).toString();
    const half = Math.floor(message.length / 2);

    const idle = new SmtpSession(harness.smtpPort);
    await idle.reply();
    await idle.command('EHLO idle.test');

    const sending = new SmtpSession(harness.smtpPort);
    await sending.reply();
    await sending.command('EHLO busy.test');
    await sending.command('MAIL FROM:<ann@acme.example>');
    await sending.command('RCPT TO:<documents@ingest.test>');
    expect((await sending.command('DATA')).code).toBe(354);
    await sending.write(message.slice(0, half).replace(/\r?\n/g, '\r\n'));

    const closed = harness.gateway.close();

    const late = new SmtpSession(harness.smtpPort);
    expect((await late.reply()).text).toMatch(/^421 4\.3\.2 /);
    expect((await idle.command('MAIL FROM:<ann@acme.example>')).text).toMatch(/^421 4\.3\.2 /);

    await sending.write(message.slice(half).replace(/\r?\n/g, '\r\n'));
    const reply = await sending.endData();
    expect(reply.text).toMatch(/^250 2\.0\.0 queued as /);
    await closed;
    await Promise.all([idle.close(), sending.close(), late.close()]);

    // Accepted means stored: the record and its upload job are in Redis after the stop.
    const redis = new Redis(harness.redis.url);
    try {
      const keys = createKeySpace(harness.config.redis.prefix);
      const id = queuedId(reply);
      expect(await redis.hget(keys.message(id).record, 'status')).toBe('enqueued');
      expect(await rawCopyLength(redis, keys.message(id).raw)).toBeGreaterThan(0);
    } finally {
      redis.disconnect();
    }
  });
});
