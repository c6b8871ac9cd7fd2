import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BounceSink, startBounceSink, until } from '../../harness/bounce-sink.ts';
import { startExim, type TestExim } from '../../harness/exim.ts';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { readyzAnswers } from '../../harness/http-state.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { deliver } from '../../harness/smtp-session.ts';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/**
 * The gateway as an MX behind Exim, the twin of the Postfix relay test: a private Exim relays
 * the ingest domain to the gateway with a `manualroute` router and sends its bounces to a
 * sink. Exim puts every recipient of a message in one transaction; a recipient refused with
 * 452 is sent again in a transaction of its own, and one left deferred waits for a queue run,
 * which the tests start at once with `exim -qff`. Each test ends with every recipient either
 * uploaded exactly once or bounced to the sender, and nothing left in Exim's queue.
 */
describe('behind Exim', () => {
  let harness: Harness;
  let exim: TestExim;
  let sink: BounceSink;

  beforeAll(async () => {
    harness = await startHarness();
    sink = await startBounceSink();
    exim = await startExim({ relay: { 'ingest.test': harness.smtpPort, 'sink.test': sink.port } });
  }, 120_000);
  afterAll(async () => {
    await exim?.stop();
    await sink?.close();
    await harness?.close();
  });

  /** Runs Exim's queue until it is empty: a deferred recipient is tried again at once. */
  async function drainQueue(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const queued = await exim.queue();
      if (queued.length === 0) return;
      if (Date.now() > deadline)
        throw new Error(`queue still holds ${JSON.stringify(queued)}:\n${await exim.log()}`);
      await exim.flush();
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  const uploadsOf = (pdf: Buffer) =>
    harness.mock.uploads
      .filter((upload) => upload.file?.sha256 === sha256(pdf))
      .map((upload) => upload.fields.workspace?.[0])
      .sort();

  it('delivers to the admitting workspace and bounces the refusing one with 5.7.1, from one batched message', async () => {
    const pdf = uniquePdf('exim-batch');
    const submitted = await deliver(exim.port, {
      from: 'sender@sink.test',
      to: ['documents@ingest.test', 'invoices@ingest.test'],
      message: await composeMessage({
        from: 'someone@else.example',
        to: 'documents@ingest.test, invoices@ingest.test',
        attachments: [{ filename: 'batch.pdf', content: pdf }],
      }),
    });
    expect(submitted.data?.code).toBe(250);
    await exim.waitForLog(/=> documents@ingest\.test/);
    await drainQueue();

    const bounce = await until('the bounce', () =>
      sink.messages.find((text) => text.includes('invoices@ingest.test')),
    ).catch(async (err: unknown) => {
      throw new Error(`${String(err)}; the Exim log:\n${await exim.log()}`);
    });
    expect(bounce).toMatch(/Content-Type: message\/delivery-status/i);
    expect(bounce).toMatch(/Final-Recipient: rfc822; ?invoices@ingest\.test/i);
    expect(bounce).toMatch(/Diagnostic-Code: smtp; ?550 5\.7\.1/i);
    expect(bounce).not.toMatch(/Final-Recipient: rfc822; ?documents@ingest\.test/i);

    const log = await exim.log();
    expect(log).toMatch(/\*\* invoices@ingest\.test .*550 5\.7\.1/);
    expect(log).not.toMatch(/\*\* documents@ingest\.test/);
    expect(uploadsOf(pdf)).toEqual(['ws-open']);
  });

  it('uploads once to each workspace when both admit the sender of one batched message', async () => {
    const pdf = uniquePdf('exim-both');
    const before = sink.messages.length;
    const submitted = await deliver(exim.port, {
      from: 'sender@sink.test',
      to: ['documents@ingest.test', 'invoices@ingest.test'],
      message: await composeMessage({
        from: 'ap@acme.example',
        to: 'documents@ingest.test, invoices@ingest.test',
        attachments: [{ filename: 'both.pdf', content: pdf }],
      }),
    });
    expect(submitted.data?.code).toBe(250);
    await exim.waitForLog(/=> documents@ingest\.test/);
    await drainQueue();
    await until('both uploads', () => (uploadsOf(pdf).length >= 2 ? true : undefined));

    const log = await exim.log();
    expect(log).toMatch(/=> invoices@ingest\.test/);
    expect(uploadsOf(pdf)).toEqual(['ws-acme', 'ws-open']);
    expect(sink.messages.slice(before)).toEqual([]);
  });

  // Bounded as a whole at 120 s (Redis stopped and back, the queue run, the upload): above the
  // 60 s of each wait inside, so a stuck step fails with what it waited for.
  it('keeps a message deferred on 451 and delivers it after exim -qff', async () => {
    const pdf = uniquePdf('exim-451');
    await harness.redis.stop();
    try {
      const submitted = await deliver(exim.port, {
        from: 'sender@sink.test',
        to: ['documents@ingest.test'],
        message: await composeMessage({ attachments: [{ filename: 'later.pdf', content: pdf }] }),
      });
      expect(submitted.data?.code).toBe(250);
      await exim.waitForLog(/== documents@ingest\.test .*451 4\.3\.0/);
    } finally {
      await harness.redis.start();
    }
    await exim.waitForDeferred(['documents@ingest.test']);
    // The queue run must meet a gateway that takes mail again: a try while the intake's
    // connections still reconnect is answered 451 once more and stays queued.
    await readyzAnswers(harness.httpUrl, 200);
    await drainQueue();
    await until('the upload', () => (uploadsOf(pdf).length > 0 ? true : undefined));
    expect(uploadsOf(pdf)).toEqual(['ws-open']);
  }, 120_000);

  // Exim sends QUIT in the same write as a message's final dot and then half-closes its side
  // of the connection (RFC 2920 lets QUIT end a pipelined group): the refusal must still reach
  // it, or it would retry at every queue run instead of bouncing.
  it('bounces a 550 at once, without retrying', async () => {
    const submitted = await deliver(exim.port, {
      from: 'sender@sink.test',
      to: ['documents@ingest.test'],
      message: await composeMessage({
        attachments: [{ filename: 'a.zip', content: Buffer.from('PK\u0005\u0006'.padEnd(22, '\0')) }],
      }),
    });
    expect(submitted.data?.code).toBe(250);
    const log = await exim.waitForLog(/\*\* documents@ingest\.test .*550 5\.6\.0/, 10_000);
    expect(log.match(/550 5\.6\.0/g)?.length).toBe(1);
    const bounce = await until('the bounce', () =>
      sink.messages.find((text) => /Diagnostic-Code: smtp; ?550 5\.6\.0/i.test(text)),
    );
    expect(bounce).toMatch(/Final-Recipient: rfc822; ?documents@ingest\.test/i);
    // Nothing left to retry once the bounce is out: the message is not deferred.
    while ((await exim.queue()).length > 0) await new Promise((resolve) => setTimeout(resolve, 200));
  });
});
