import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BounceSink, startBounceSink, until } from '../../harness/bounce-sink.ts';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { readyzAnswers } from '../../harness/http-state.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { startPostfix, type TestPostfix } from '../../harness/postfix.ts';
import { deliver } from '../../harness/smtp-session.ts';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/**
 * The gateway as an MX behind a real MTA: a private Postfix instance relays the ingest domain
 * to it and sends its bounces to a sink, so each reply is judged by what Postfix does with it.
 * Postfix keeps its own retry schedule (a deferred message waits five minutes); the tests run
 * the next queue run at once with `postqueue -f`.
 */
describe('behind Postfix', () => {
  let harness: Harness;
  let postfix: TestPostfix;
  let sink: BounceSink;

  beforeAll(async () => {
    harness = await startHarness();
    sink = await startBounceSink();
    const relay = { 'ingest.test': harness.smtpPort, 'sink.test': sink.port };
    postfix = await startPostfix({ relay });
  }, 120_000);
  afterAll(async () => {
    await postfix?.stop();
    await sink?.close();
    await harness?.close();
  });

  it('delivers to the admitting workspace and bounces the refusing one with 5.7.1, from one batched message', async () => {
    const pdf = uniquePdf('postfix-batch');
    const message = await composeMessage({
      from: 'someone@else.example',
      to: 'documents@ingest.test, invoices@ingest.test',
      attachments: [{ filename: 'batch.pdf', content: pdf }],
    });
    const submitted = await deliver(postfix.port, {
      from: 'sender@sink.test',
      to: ['documents@ingest.test', 'invoices@ingest.test'],
      message,
    });
    expect(submitted.data?.code).toBe(250);
    // The 452 recipient waits for Postfix's next queue run, in a transaction of its own.
    await postfix.waitForDeferred(['invoices@ingest.test']);
    await postfix.flush();

    const bounce = await until('the bounce', () =>
      sink.messages.find((text) => text.includes('invoices@ingest.test')),
    ).catch(async (err: unknown) => {
      throw new Error(`${String(err)}; the Postfix log:\n${await postfix.log()}`);
    });
    expect(bounce).toMatch(/Content-Type: message\/delivery-status/i);
    expect(bounce).toMatch(/Final-Recipient: rfc822; ?invoices@ingest\.test/i);
    expect(bounce).toMatch(/Status: 5\.7\.1/);
    expect(bounce).not.toMatch(/Final-Recipient: rfc822; ?documents@ingest\.test/i);

    const log = await postfix.waitForLog(/to=<documents@ingest\.test>.*status=sent/);
    expect(log).toMatch(/to=<invoices@ingest\.test>.*said: 452 4\.5\.3/);
    expect(log).toMatch(/to=<invoices@ingest\.test>.*status=bounced.*550 5\.7\.1/);
    const uploads = harness.mock.uploads.filter((upload) => upload.file?.sha256 === sha256(pdf));
    expect(uploads.map((upload) => upload.fields.workspace?.[0])).toEqual(['ws-open']);
  });

  it('uploads once to each workspace when both admit the sender of one batched message', async () => {
    const pdf = uniquePdf('postfix-both');
    const before = sink.messages.length;
    const submitted = await deliver(postfix.port, {
      from: 'sender@sink.test',
      to: ['documents@ingest.test', 'invoices@ingest.test'],
      message: await composeMessage({
        from: 'ap@acme.example',
        to: 'documents@ingest.test, invoices@ingest.test',
        attachments: [{ filename: 'both.pdf', content: pdf }],
      }),
    });
    expect(submitted.data?.code).toBe(250);
    // The 452 recipient waits for the next queue run, in a transaction of its own.
    await postfix.waitForDeferred(['invoices@ingest.test']);
    await postfix.flush();
    await postfix.waitForLog(/to=<invoices@ingest\.test>.*status=sent/);
    const uploadsOf = () =>
      harness.mock.uploads
        .filter((upload) => upload.file?.sha256 === sha256(pdf))
        .map((upload) => upload.fields.workspace?.[0])
        .sort();
    await until('both uploads', () => (uploadsOf().length >= 2 ? true : undefined));
    expect(uploadsOf()).toEqual(['ws-acme', 'ws-open']);
    expect(await postfix.queue()).toEqual([]);
    expect(sink.messages.slice(before)).toEqual([]);
  });

  // Bounded as a whole at 120 s (Redis stopped and back, Postfix's retry, the upload): above
  // the 60 s of each wait inside, so a stuck step fails with what it waited for.
  it('keeps a message deferred on 451 and delivers it after postqueue -f', async () => {
    const pdf = uniquePdf('postfix-451');
    await harness.redis.stop();
    try {
      const submitted = await deliver(postfix.port, {
        from: 'sender@sink.test',
        to: ['documents@ingest.test'],
        message: await composeMessage({ attachments: [{ filename: 'later.pdf', content: pdf }] }),
      });
      expect(submitted.data?.code).toBe(250);
      await postfix.waitForLog(/to=<documents@ingest\.test>.*status=deferred.*451 4\.3\.0/);
    } finally {
      await harness.redis.start();
    }
    await postfix.waitForDeferred(['documents@ingest.test']);
    // Postfix's next try must meet a gateway that takes mail again: a try while the intake's
    // connections still reconnect is answered 451 once more and deferred for minutes.
    await readyzAnswers(harness.httpUrl, 200);
    await postfix.flush();
    await until('the upload', () =>
      harness.mock.uploads.find((upload) => upload.file?.sha256 === sha256(pdf)),
    );
  }, 120_000);

  it('bounces a 550 at once, without retrying', async () => {
    const submitted = await deliver(postfix.port, {
      from: 'sender@sink.test',
      to: ['documents@ingest.test'],
      message: await composeMessage({
        attachments: [{ filename: 'a.zip', content: Buffer.from('PK\u0005\u0006'.padEnd(22, '\0')) }],
      }),
    });
    expect(submitted.data?.code).toBe(250);
    const log = await postfix.waitForLog(/status=bounced.*550 5\.6\.0/);
    expect(log.match(/550 5\.6\.0/g)?.length).toBe(1);
    const bounce = await until('the bounce', () =>
      sink.messages.find((text) => /Status: 5\.6\.0/.test(text)),
    );
    expect(bounce).toMatch(/Final-Recipient: rfc822; ?documents@ingest\.test/i);
  });
});
