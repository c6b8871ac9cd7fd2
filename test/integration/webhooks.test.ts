import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../examples/webhook-receiver.ts';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { until } from '../../harness/http-state.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { deliver, queuedId, SmtpSession } from '../../harness/smtp-session.ts';
import { startWebhookReceiver, type TestWebhookReceiver } from '../../harness/webhook-receiver.ts';
import { type WebhookJobData, webhookQueueName } from '../../src/queue/webhook-queue.ts';
import { createKeySpace } from '../../src/record/keys.ts';
import { signDelivery } from '../../src/webhooks/sign-delivery.ts';

const everySecret = 'every-event-secret-0123456789';
const acmeSecret = 'acme-uploads-secret-0123456789';
const flakySecret = 'flaky-receiver-secret-0123456789';

/** The deliveries queued for one receiver, by event name and message id. */
async function queuedDeliveries(harness: Harness, url: string): Promise<string[]> {
  const queue = new Queue<WebhookJobData>(webhookQueueName, {
    connection: { host: '127.0.0.1', port: harness.redis.port },
    prefix: createKeySpace(harness.config.redis.prefix).queuePrefix,
  });
  try {
    const jobs = await queue.getJobs(['completed', 'waiting', 'delayed', 'active', 'failed']);
    return jobs
      .filter((job) => job.data.url === url)
      .map((job) => `${job.data.event.event} ${String(job.data.event.payload.messageId)}`)
      .sort();
  } finally {
    await queue.close();
  }
}

/** Signed webhooks (README, "Webhooks"): what each receiver gets, signed, and after a 503. */
describe('webhooks', () => {
  let harness: Harness;
  let every: TestWebhookReceiver;
  let acme: TestWebhookReceiver;
  let flaky: TestWebhookReceiver;

  beforeAll(async () => {
    [every, acme, flaky] = await Promise.all([
      startWebhookReceiver(everySecret),
      startWebhookReceiver(acmeSecret),
      startWebhookReceiver(flakySecret),
    ]);
    flaky.answer503(2);
    harness = await startHarness({
      http: { publicUrl: 'https://gateway.example' },
      events: {
        retryBaseDelay: 50,
        retryMaxDelay: 100,
        webhooks: [
          { url: every.url, secret: everySecret },
          { url: acme.url, secret: acmeSecret, events: ['document.uploaded'], workspaces: ['ws-acme'] },
          { url: flaky.url, secret: flakySecret, events: ['message.accepted'], workspaces: ['ws-open'] },
        ],
      },
    });
  });
  afterAll(async () => {
    await harness?.close();
    await Promise.all([every?.close(), acme?.close(), flaky?.close()]);
  });

  async function send(to: string, label: string): Promise<string> {
    const message = await composeMessage({
      to,
      attachments: [{ filename: `${label}.pdf`, content: uniquePdf(label) }],
    });
    const { data } = await deliver(harness.smtpPort, { from: 'ann@acme.example', to: [to], message });
    return queuedId(data);
  }

  const queuedFor = (url: string) => queuedDeliveries(harness, url);

  it('posts message.accepted and document.uploaded, signed, with links instead of the mail', async () => {
    const id = await send('documents@ingest.test', 'hooked');
    expect(await harness.settled(id, 0)).toBe('completed');
    const accepted = await every.waitFor((e) => e.event === 'message.accepted' && e.payload.messageId === id);
    const uploaded = await every.waitFor(
      (e) => e.event === 'document.uploaded' && e.payload.messageId === id,
    );
    expect(accepted.payload).toMatchObject({
      messageId: id,
      workspace: 'ws-open',
      links: {
        record: `https://gateway.example/v1/messages/${id}`,
        rawEmail: `https://gateway.example/v1/messages/${id}/raw`,
      },
    });
    expect(accepted.payload.attachments).toEqual([expect.objectContaining({ fileName: 'hooked.pdf' })]);
    const record = await harness.record(id);
    expect(uploaded.payload).toMatchObject({
      workspace: 'ws-open',
      attachment: {
        entry: 0,
        state: 'uploaded',
        documentIdentifier: record.attachments[0]?.documentIdentifier,
      },
    });
    expect(uploaded.id).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(uploaded.id).not.toBe(accepted.id);
    // Every event reached the receiver once (its signature checked by the README's example).
    expect(every.events.filter((e) => e.payload.messageId === id)).toHaveLength(2);
    expect(every.forged).toBe(0);
    const text = JSON.stringify(every.events);
    expect(text).not.toContain(harness.apiKey);
    expect(text).not.toContain('Please find the invoice attached');
  });

  it('gives each receiver only the events and workspaces it asked for', async () => {
    const open = await send('documents@ingest.test', 'filtered-open');
    const acmeId = await send('invoices@ingest.test', 'filtered-acme');
    expect(await harness.settled(open, 0)).toBe('completed');
    expect(await harness.settled(acmeId, 0)).toBe('completed');
    const got = await acme.waitFor((e) => e.payload.messageId === acmeId);
    expect(got).toMatchObject({ event: 'document.uploaded', payload: { workspace: 'ws-acme' } });
    // Both messages have settled, so every delivery either has been made or is queued.
    expect(
      (await queuedFor(acme.url)).filter((line) => line.includes(open) || line.includes(acmeId)),
    ).toEqual([`document.uploaded ${acmeId}`]);
    expect(
      (await queuedFor(flaky.url)).filter((line) => line.includes(open) || line.includes(acmeId)),
    ).toEqual([`message.accepted ${open}`]);
  });

  it('delivers again after the receiver answered 503, with the same event id', async () => {
    const event = await flaky.waitFor((e) => e.event === 'message.accepted');
    expect(flaky.events.filter((e) => e.id === event.id)).toHaveLength(1);
    const metrics = await (await fetch(`${harness.httpUrl}/metrics`)).text();
    expect(metrics).toMatch(/ingest_gateway_webhook_deliveries_total\{outcome="retry"\} [1-9]/);
    expect(metrics).toMatch(/ingest_gateway_webhook_deliveries_total\{outcome="delivered"\} [1-9]/);
  });

  it('never writes a webhook secret to the log', () => {
    const log = harness.logs.lines.join('\n');
    for (const secret of [everySecret, acmeSecret, flakySecret]) expect(log).not.toContain(secret);
  });
});

/** Held, released and refused mail announced from real SMTP transactions and a real release. */
describe('held, released and refused events', () => {
  const secret = 'held-events-secret-0123456789';
  let harness: Harness;
  let receiver: TestWebhookReceiver;

  beforeAll(async () => {
    receiver = await startWebhookReceiver(secret);
    harness = await startHarness({
      http: { publicUrl: 'https://gateway.example' },
      events: { retryBaseDelay: 50, retryMaxDelay: 100, webhooks: [{ url: receiver.url, secret }] },
      workspaces: [
        {
          identifier: 'ws-hold',
          ingestEmail: 'hold@ingest.test',
          whitelistIngestAddresses: ['*@partner.example'],
          unlistedSenders: 'hold',
        },
        {
          identifier: 'ws-refuse',
          ingestEmail: 'refuse@ingest.test',
          whitelistIngestAddresses: ['*@partner.example'],
        },
      ],
    });
  });
  afterAll(async () => {
    await harness?.close();
    await receiver?.close();
  });

  async function send(to: string, label: string) {
    const message = await composeMessage({
      from: 'fay@stranger.example',
      text: 'Please find the invoice attached.',
      attachments: [{ filename: `${label}.pdf`, content: uniquePdf(label) }],
    });
    return deliver(harness.smtpPort, { from: 'fay@stranger.example', to: [to], message });
  }

  it('posts message.held at hold time and message.released at the release, not message.accepted', async () => {
    const id = queuedId((await send('hold@ingest.test', 'held-event')).data);
    const held = await receiver.waitFor((e) => e.event === 'message.held' && e.payload.messageId === id);
    expect(held.payload).toMatchObject({
      messageId: id,
      workspace: 'ws-hold',
      reason: 'sender_not_listed',
      attachments: [expect.objectContaining({ fileName: 'held-event.pdf', state: 'held' })],
      links: {
        record: `https://gateway.example/v1/messages/${id}`,
        rawEmail: `https://gateway.example/v1/messages/${id}/raw`,
      },
    });
    const released = await fetch(`${harness.httpUrl}/v1/messages/${id}/release`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(released.status).toBe(200);
    const event = await receiver.waitFor((e) => e.event === 'message.released' && e.payload.messageId === id);
    expect(event.payload).toMatchObject({ workspace: 'ws-hold', reason: 'sender_not_listed', queued: 1 });
    expect(event.id).not.toBe(held.id);
    // A second release changes nothing and announces nothing.
    await fetch(`${harness.httpUrl}/v1/messages/${id}/release`, { method: 'POST' });
    expect(await harness.settled(id, 0)).toBe('completed');
    await receiver.waitFor((e) => e.event === 'document.uploaded' && e.payload.messageId === id);
    expect(
      receiver.events
        .filter((e) => e.payload.messageId === id)
        .map((e) => e.event)
        .sort(),
    ).toEqual(['document.uploaded', 'message.held', 'message.released']);
    const text = JSON.stringify(receiver.events);
    expect(text).not.toContain(harness.apiKey);
    expect(text).not.toContain('Please find the invoice attached');
  });

  it('posts message.refused for a message refused at DATA, linking to the refusal log', async () => {
    const { data } = await send('refuse@ingest.test', 'refused-event');
    expect(data?.code).toBe(550);
    const refused = await receiver.waitFor(
      (e) => e.event === 'message.refused' && e.payload.workspace === 'ws-refuse',
    );
    expect(refused.payload).toMatchObject({
      messageId: null,
      stage: 'data',
      code: 'sender_not_admitted',
      reply: data?.text,
      mailFrom: 'fay@stranger.example',
      recipients: ['refuse@ingest.test'],
      links: { refusals: 'https://gateway.example/v1/refusals?to=refuse%40ingest.test&stage=data' },
    });
    expect(refused.id).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(receiver.forged).toBe(0);
  });

  it('posts message.refused for an ingest address refused at RCPT, never for an unknown one', async () => {
    const session = new SmtpSession(harness.smtpPort);
    try {
      await session.reply();
      await session.command('EHLO client.test');
      await session.command('MAIL FROM:<fay@stranger.example>');
      expect((await session.command('RCPT TO:<nobody@ingest.test>')).code).toBe(550);
      expect((await session.command('RCPT TO:<refuse@ingest.test> XFOO=1')).code).toBe(555);
    } finally {
      await session.close();
    }
    const refused = await receiver.waitFor(
      (e) => e.event === 'message.refused' && e.payload.stage === 'rcpt',
    );
    expect(refused.payload).toMatchObject({
      workspace: 'ws-refuse',
      code: 'unknown_parameter',
      recipients: ['refuse@ingest.test'],
    });
    // The unknown address was never queued: the refusal at DATA above and this one are all.
    const queued = await queuedDeliveries(harness, receiver.url);
    expect(queued.filter((line) => line.startsWith('message.refused'))).toHaveLength(2);
    expect(JSON.stringify(receiver.events)).not.toContain('nobody@ingest.test');
  });
});

/** A delivery given up is listed beside the failed uploads and can be sent again from there. */
describe('failed webhook deliveries', () => {
  let harness: Harness;
  let down: TestWebhookReceiver;

  beforeAll(async () => {
    down = await startWebhookReceiver(flakySecret);
    down.answer503(1);
    harness = await startHarness({
      // retryFor 0: one attempt, then the delivery is given up.
      events: {
        retryFor: 0,
        webhooks: [{ url: down.url, secret: flakySecret, events: ['message.accepted'] }],
      },
    });
  });
  afterAll(async () => {
    await harness?.close();
    await down?.close();
  });

  const api = (path: string, init?: RequestInit) => fetch(`${harness.httpUrl}${path}`, init);

  it('lists the delivery given up and delivers it again on retry', async () => {
    const message = await composeMessage({
      attachments: [{ filename: 'given-up.pdf', content: uniquePdf('given-up') }],
    });
    const id = queuedId((await deliver(harness.smtpPort, { to: ['documents@ingest.test'], message })).data);
    type Listing = {
      deliveries: Array<{ id: string; messageId: string; event: string; reason: string; receiver: string }>;
    };
    const listing = await until(
      'the delivery given up',
      async () => (await (await api('/v1/webhooks/deliveries?state=failed')).json()) as Listing,
      (page) => page.deliveries.length > 0,
    );
    const [failed] = listing.deliveries;
    expect(failed).toMatchObject({
      messageId: id,
      event: 'message.accepted',
      reason: 'the receiver answered HTTP 503',
      receiver: new URL(down.url).origin,
    });
    expect(down.events).toHaveLength(0);
    const retried = await api(`/v1/webhooks/deliveries/${failed?.id}/retry`, { method: 'POST' });
    expect(retried.status).toBe(200);
    const event = await down.waitFor((e) => e.payload.messageId === id);
    expect(event.event).toBe('message.accepted');
    const again = await api(`/v1/webhooks/deliveries/${failed?.id}/retry`, { method: 'POST' });
    expect(again.status).toBe(404);
    expect((await api('/v1/webhooks/deliveries?state=delivered')).status).toBe(400);
    const metrics = await (await api('/metrics')).text();
    expect(metrics).toMatch(/ingest_gateway_webhook_deliveries_total\{outcome="failed"\} 1/);
  });
});

describe('the README example verifies signatures', () => {
  const body = '{"id":"evt_1","event":"message.accepted"}';
  const now = 1_800_000_000_000;
  const t = now / 1000;

  it.each([
    ['the signature of the body', signDelivery(everySecret, body, t), body, true],
    ['another body', signDelivery(everySecret, body, t), `${body} `, false],
    ['another secret', signDelivery(acmeSecret, body, t), body, false],
    ['a time past the tolerance', signDelivery(everySecret, body, t - 301), body, false],
    ['no v1', `t=${t}`, body, false],
    ['a truncated signature', signDelivery(everySecret, body, t).slice(0, -2), body, false],
  ])('%s', (_name, header, received, valid) => {
    expect(verifyWebhook(received, header, everySecret, { now })).toBe(valid);
  });
});
