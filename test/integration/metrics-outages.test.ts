import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { readyzAnswers, until } from '../../harness/http-state.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { growth, scrape } from '../../harness/metrics-scrape.ts';
import { clientsClosedAfterEach, deliver, queuedId } from '../../harness/smtp-session.ts';

const client = clientsClosedAfterEach();

/**
 * What an operator is paged for, as GET /metrics shows it: a refused API key (uploads paused,
 * the queue backing up), clients over the rate limits, Redis gone. One gateway, in this order:
 * its first scrape comes after the pause, so no earlier reading of the queue is served.
 */
describe('GET /metrics when things go wrong', () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startHarness({
      smtp: {
        rateLimit: {
          window: 600_000,
          connectionsPerIp: 3,
          messagesPerIp: 3,
          messagesPerSender: 1,
          exempt: [],
        },
      },
      // One upload at a time: with more, an idle slot of the paused worker takes the job it
      // handed back (a BullMQ race); what is measured here is the pause.
      upload: { concurrency: 1 },
      workspaces: [{ identifier: 'ws-open', ingestEmail: 'documents@ingest.test' }],
    });
  });
  afterAll(async () => harness?.close());

  it('shows uploads paused on a refused API key, and the job waiting with its age', async () => {
    harness.mock.enqueueFault({ status: 401 });
    const message = await composeMessage({
      attachments: [{ filename: 'held.pdf', content: uniquePdf('held') }],
    });
    // Connection 1 of 3, MAIL 1 of 3; ann@acme.example has used up her one message.
    const id = queuedId(
      (await deliver(harness.smtpPort, { to: ['documents@ingest.test'], message, from: 'ann@acme.example' }))
        .data,
    );
    await harness.handedBack(id, 0, 1);

    const read = await scrape(harness.httpUrl);
    expect(read.value('ingest_gateway_uploads_paused{reason="api_key_refused"}')).toBe(1);
    expect(read.value('ingest_gateway_queue_jobs{state="waiting"}')).toBe(1);
    expect(read.value('ingest_gateway_queue_jobs{state="active"}')).toBe(0);
    expect(read.value('ingest_gateway_queue_oldest_waiting_seconds')).toBeGreaterThan(0);
    expect(read.value('ingest_gateway_uploads_total{outcome="unauthorized"}')).toBe(1);
    // Not settled: the document waits for a corrected key.
    expect(read.value('ingest_gateway_documents_total{outcome="failed"}')).toBe(0);
    expect(read.value('ingest_gateway_documents_total{outcome="uploaded"}')).toBe(0);

    // The operator reloads with a key the service takes (SIGHUP): the worker resumes.
    harness.gateway.settings.replace({
      config: harness.config,
      apiBaseUrl: harness.mockUrl,
      apiKey: harness.apiKey,
    });
    expect(await harness.settled(id, 0)).toBe('completed');
    const resumed = await scrape(harness.httpUrl);
    expect(resumed.value('ingest_gateway_uploads_paused{reason="api_key_refused"}')).toBe(0);
    expect(resumed.value('ingest_gateway_documents_total{outcome="uploaded"}')).toBe(1);
  });

  it('counts clients over the rate limits by kind, and their refusals by stage', async () => {
    const before = await scrape(harness.httpUrl);
    // Connection 2: MAIL 2 (ann's quota is used up), MAIL 3 (under the limit), MAIL 4 (over it).
    const session = client(harness.smtpPort);
    expect((await session.reply()).code).toBe(220);
    await session.command('EHLO client.test');
    expect((await session.command('MAIL FROM:<ann@acme.example>')).code).toBe(450);
    expect((await session.command('MAIL FROM:<bob@acme.example>')).code).toBe(250);
    await session.command('RSET');
    expect((await session.command('MAIL FROM:<cy@acme.example>')).code).toBe(450);
    // Connection 3 is the last the limit allows; connection 4 is refused.
    expect((await client(harness.smtpPort).reply()).code).toBe(220);
    const refused = client(harness.smtpPort);
    expect((await refused.reply()).code).toBe(421);
    await refused.closed;
    const after = await scrape(harness.httpUrl);

    expect(
      growth(before, after, [
        'ingest_gateway_rate_limited_total{kind="connection"}',
        'ingest_gateway_rate_limited_total{kind="message_ip"}',
        'ingest_gateway_rate_limited_total{kind="message_sender"}',
        'ingest_gateway_smtp_refusals_total{stage="connect",reason="connection_rate_exceeded"}',
        'ingest_gateway_smtp_refusals_total{stage="mail",reason="message_rate_exceeded"}',
      ]),
    ).toEqual({
      'ingest_gateway_rate_limited_total{kind="connection"}': 1,
      'ingest_gateway_rate_limited_total{kind="message_ip"}': 1,
      'ingest_gateway_rate_limited_total{kind="message_sender"}': 1,
      'ingest_gateway_smtp_refusals_total{stage="connect",reason="connection_rate_exceeded"}': 1,
      'ingest_gateway_smtp_refusals_total{stage="mail",reason="message_rate_exceeded"}': 2,
    });
  });

  it('counts mail deferred for Redis as internal, and answers with redis_up 0 and no queue gauges', async () => {
    const before = await scrape(harness.httpUrl);
    await harness.redis.stop();
    try {
      // Mail still comes: the rate limits let it through (fail open), DATA cannot commit.
      const message = await composeMessage({
        attachments: [{ filename: 'deferred.pdf', content: uniquePdf('deferred') }],
      });
      const deferred = await deliver(harness.smtpPort, { to: ['documents@ingest.test'], message });
      expect(deferred.data?.text).toMatch(/^451 4\.3\.0 /);
      expect(
        growth(before, await scrape(harness.httpUrl), [
          'ingest_gateway_smtp_refusals_total{stage="data",reason="internal"}',
          'ingest_gateway_smtp_messages_total{outcome="failed",code="451"}',
        ]),
      ).toEqual({
        'ingest_gateway_smtp_refusals_total{stage="data",reason="internal"}': 1,
        'ingest_gateway_smtp_messages_total{outcome="failed",code="451"}': 1,
      });

      // The last reading is served for a few seconds; then the reader finds Redis gone.
      const down = await until(
        'the scrape to show Redis down',
        () => scrape(harness.httpUrl),
        (read) =>
          read.value('ingest_gateway_redis_up') === 0 &&
          read.series('ingest_gateway_queue_jobs').length === 0,
      );
      // A gauge without labels is always written: NaN says its value is not known.
      expect(down.value('ingest_gateway_queue_oldest_waiting_seconds')).toBeNaN();
      // Counters are the process's own: they are still there.
      expect(down.value('ingest_gateway_rate_limited_total{kind="connection"}')).toBe(1);
      // A coarse bound that holds with both cores busy: the scrape does not wait for Redis.
      const started = performance.now();
      await scrape(harness.httpUrl);
      expect(performance.now() - started).toBeLessThan(5000);
    } finally {
      await harness.redis.start();
    }
    await until(
      'the scrape to show Redis back',
      () => scrape(harness.httpUrl),
      (read) =>
        read.value('ingest_gateway_redis_up') === 1 &&
        read.value('ingest_gateway_queue_jobs{state="waiting"}') === 0,
    );
    await readyzAnswers(harness.httpUrl, 200);
  });
});
