import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFakeDns, type FakeDns } from '../../harness/dns-fake.ts';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { until } from '../../harness/http-state.ts';
import { composeMessage, sampleFile, uniquePdf } from '../../harness/messages.ts';
import { growth, scrape } from '../../harness/metrics-scrape.ts';
import { clientsClosedAfterEach, deliver, queuedId } from '../../harness/smtp-session.ts';

const client = clientsClosedAfterEach();

/**
 * The metrics an operator alerts on, read over HTTP from GET /metrics after real mail: each
 * test reads the series before and after what it does and asserts what grew, and by how much.
 */
describe('GET /metrics', () => {
  let harness: Harness;
  let dns: FakeDns;

  beforeAll(async () => {
    dns = createFakeDns({
      // Mail for acme.example comes from mail.acme.example (aligned), 127.0.0.1 in these tests.
      'TXT mail.acme.example': ['v=spf1 ip4:127.0.0.1 -all'],
      'TXT evil.test': ['v=spf1 ip4:127.0.0.1 -all'],
    });
    dns.fail('flaky.acme.example', 'ETIMEOUT');
    harness = await startHarness({
      resolver: dns.resolver,
      workspaces: [
        { identifier: 'ws-open', ingestEmail: 'documents@ingest.test' },
        {
          identifier: 'ws-acme',
          ingestEmail: 'invoices@ingest.test',
          whitelistIngestAddresses: ['*@acme.example'],
        },
        {
          identifier: 'ws-aligned',
          ingestEmail: 'aligned@ingest.test',
          whitelistIngestAddresses: ['*@acme.example'],
          senderAuthentication: 'aligned',
        },
        {
          identifier: 'ws-wait',
          ingestEmail: 'parsed@ingest.test',
          upload: { wait: true, rejectDuplicates: true },
        },
        { identifier: 'ws-track', ingestEmail: 'track@ingest.test', trackCompletion: { firstDelay: 100 } },
      ],
    });
  });
  afterAll(async () => harness?.close());

  async function invoice(label: string, from = 'Ann <ann@acme.example>'): Promise<Buffer> {
    return composeMessage({ from, attachments: [{ filename: `${label}.pdf`, content: uniquePdf(label) }] });
  }

  async function send(to: string, message: Buffer, from?: string) {
    return deliver(harness.smtpPort, { to: [to], message, ...(from ? { from } : {}) });
  }

  it('counts refusals by stage and reason: RCPT, DATA, a failure of the session', async () => {
    const before = await scrape(harness.httpUrl);

    const unknown = await send('nobody@ingest.test', await invoice('unknown'));
    expect(unknown.rcpt[0]?.code).toBe(550);
    const notAdmitted = await send('invoices@ingest.test', await invoice('eve', 'Eve <eve@evil.example>'));
    expect(notAdmitted.data?.text).toMatch(/^550 5\.7\.1 /);
    const textOnly = await send('documents@ingest.test', await composeMessage({ text: 'no file here' }));
    expect(textOnly.data?.text).toMatch(/^550 5\.6\.0 no supported attachment/);
    const session = client(harness.smtpPort);
    await session.reply();
    expect((await session.command(`EHLO ${'a'.repeat(600)}`)).text).toMatch(/^500 5\.5\.2 line too long/);

    const after = await scrape(harness.httpUrl);
    expect(
      growth(before, after, [
        'ingest_gateway_smtp_refusals_total{stage="rcpt",reason="recipient_unknown"}',
        'ingest_gateway_smtp_refusals_total{stage="data",reason="sender_not_admitted"}',
        'ingest_gateway_smtp_refusals_total{stage="data",reason="no_supported_attachment"}',
        'ingest_gateway_smtp_refusals_total{stage="session",reason="command_line_too_long"}',
        'ingest_gateway_smtp_messages_total{outcome="refused",code="550"}',
        'ingest_gateway_attachments_total{outcome="queued"}',
      ]),
    ).toEqual({
      'ingest_gateway_smtp_refusals_total{stage="rcpt",reason="recipient_unknown"}': 1,
      'ingest_gateway_smtp_refusals_total{stage="data",reason="sender_not_admitted"}': 1,
      'ingest_gateway_smtp_refusals_total{stage="data",reason="no_supported_attachment"}': 1,
      'ingest_gateway_smtp_refusals_total{stage="session",reason="command_line_too_long"}': 1,
      'ingest_gateway_smtp_messages_total{outcome="refused",code="550"}': 2,
      'ingest_gateway_attachments_total{outcome="queued"}': 0,
    });
  });

  it('counts the parts of an accepted message, queued and skipped by reason, and not again for a repeat', async () => {
    const message = await composeMessage({
      html: '<p>Invoice attached</p><img src="cid:logo@acme">',
      attachments: [
        { filename: 'parts.pdf', content: uniquePdf('parts') },
        { filename: 'animation.gif', content: sampleFile('image.gif') },
        { filename: 'archive.zip', content: sampleFile('archive.zip') },
        { filename: 'empty.pdf', content: Buffer.alloc(0) },
        { filename: 'logo.png', content: sampleFile('image.png'), cid: 'logo@acme' },
        {
          filename: 'status.txt',
          contentType: 'message/delivery-status',
          content: Buffer.from('Action: failed\n'),
        },
        { contentType: 'message/external-body', content: Buffer.from('Content-Type: application/pdf\n\n') },
      ],
    });
    const before = await scrape(harness.httpUrl);
    const first = await send('documents@ingest.test', message);
    const id = queuedId(first.data);
    // The same bytes to the same recipient: the sending server's retry after a lost 250.
    const repeat = await send('documents@ingest.test', message);
    expect(queuedId(repeat.data)).toBe(id);
    const after = await scrape(harness.httpUrl);

    const kinds = [
      'queued',
      ...['unsupported_type', 'empty', 'inline_image', 'report', 'pointer', 'container'].map(
        (k) => `skipped_${k}`,
      ),
    ];
    const series = kinds.map((kind) => `ingest_gateway_attachments_total{outcome="${kind}"}`);
    expect(Object.values(growth(before, after, series))).toEqual([1, 1, 1, 1, 1, 1, 1]);
    expect(
      growth(before, after, ['ingest_gateway_smtp_messages_total{outcome="accepted",code="250"}']),
    ).toEqual({
      'ingest_gateway_smtp_messages_total{outcome="accepted",code="250"}': 2,
    });
    // The record says the same: one upload, six parts skipped.
    const { attachments } = await harness.record(id);
    expect(attachments.filter((entry) => entry.state === 'skipped')).toHaveLength(6);
    expect(attachments).toHaveLength(7);
  });

  it('counts documents: uploaded and parsed, rejected, failed', async () => {
    const before = await scrape(harness.httpUrl);
    // Completion tracking finds it parsed.
    const tracked = queuedId((await send('track@ingest.test', await invoice('tracked'))).data);
    expect(await harness.settled(tracked, 0)).toBe('completed');
    expect(await harness.completed(tracked, 0)).toBe('completed');
    // wait: true answers once parsed; the same bytes again are rejected as a duplicate.
    const content = uniquePdf('twice');
    const twice = await composeMessage({ attachments: [{ filename: 'twice.pdf', content }] });
    const waited = queuedId((await send('parsed@ingest.test', twice)).data);
    expect(await harness.settled(waited, 0)).toBe('completed');
    const again = await composeMessage({
      subject: 'again',
      attachments: [{ filename: 'again.pdf', content }],
    });
    const rejected = queuedId((await send('parsed@ingest.test', again)).data);
    expect(await harness.settled(rejected, 0)).toBe('completed');
    expect((await harness.record(rejected)).attachments[0]?.state).toBe('rejected');
    // A 400 fails for good at once.
    harness.mock.enqueueFault({ status: 400, body: { type: 'validation_error', errors: [] } });
    const failed = queuedId((await send('documents@ingest.test', await invoice('bad'))).data);
    expect(await harness.settled(failed, 0)).toBe('failed');
    const after = await scrape(harness.httpUrl);

    const outcomes = ['uploaded', 'rejected', 'failed', 'parsed', 'parse_failed'];
    expect(
      growth(
        before,
        after,
        outcomes.map((outcome) => `ingest_gateway_documents_total{outcome="${outcome}"}`),
      ),
    ).toEqual({
      'ingest_gateway_documents_total{outcome="uploaded"}': 2,
      'ingest_gateway_documents_total{outcome="rejected"}': 1,
      'ingest_gateway_documents_total{outcome="failed"}': 1,
      'ingest_gateway_documents_total{outcome="parsed"}': 2,
      'ingest_gateway_documents_total{outcome="parse_failed"}': 0,
    });
    expect(growth(before, after, ['ingest_gateway_uploads_total{outcome="failed"}'])).toEqual({
      'ingest_gateway_uploads_total{outcome="failed"}': 1,
    });
  });

  it('counts sender authentication results: pass, fail, temperror', async () => {
    const before = await scrape(harness.httpUrl);
    const pass = await send('aligned@ingest.test', await invoice('aligned'), 'bounce@mail.acme.example');
    expect(pass.data?.code).toBe(250);
    const fail = await send('aligned@ingest.test', await invoice('forged'), 'x@evil.test');
    expect(fail.data?.text).toMatch(/^550 5\.7\.1 sender not authenticated/);
    const temperror = await send('aligned@ingest.test', await invoice('flaky'), 'x@flaky.acme.example');
    expect(temperror.data?.text).toMatch(/^451 4\.7\.0 /);
    const after = await scrape(harness.httpUrl);

    expect(
      growth(before, after, [
        'ingest_gateway_sender_auth_total{result="pass"}',
        'ingest_gateway_sender_auth_total{result="fail"}',
        'ingest_gateway_sender_auth_total{result="temperror"}',
        'ingest_gateway_smtp_refusals_total{stage="data",reason="sender_not_authenticated"}',
        'ingest_gateway_smtp_refusals_total{stage="data",reason="sender_authentication_tempfail"}',
      ]),
    ).toEqual({
      'ingest_gateway_sender_auth_total{result="pass"}': 1,
      'ingest_gateway_sender_auth_total{result="fail"}': 1,
      'ingest_gateway_sender_auth_total{result="temperror"}': 1,
      'ingest_gateway_smtp_refusals_total{stage="data",reason="sender_not_authenticated"}': 1,
      'ingest_gateway_smtp_refusals_total{stage="data",reason="sender_authentication_tempfail"}': 1,
    });
  });

  it('reads the queue, Redis and the workers at scrape', async () => {
    // Every upload above has settled; the 400 left one failed job. Readings are cached for a
    // few seconds, so the scrape is read again until it shows the settled queue.
    const settled = await until(
      'the queue gauges to show the settled queue',
      () => scrape(harness.httpUrl),
      (read) => read.value('ingest_gateway_queue_jobs{state="failed"}') === 1,
    );
    expect(
      Object.fromEntries(
        settled.series('ingest_gateway_queue_jobs').map((name) => [name, settled.value(name)]),
      ),
    ).toEqual({
      'ingest_gateway_queue_jobs{state="waiting"}': 0,
      'ingest_gateway_queue_jobs{state="active"}': 0,
      'ingest_gateway_queue_jobs{state="delayed"}': 0,
      'ingest_gateway_queue_jobs{state="failed"}': 1,
    });
    expect(settled.value('ingest_gateway_queue_oldest_waiting_seconds')).toBe(0);
    expect(settled.value('ingest_gateway_redis_up')).toBe(1);
    expect(settled.value('ingest_gateway_uploads_paused{reason="api_key_refused"}')).toBe(0);
  });
});
