import { pdfWithPages } from '@ingest-gateway/mock-parsing-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKey, type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { deliver, queuedId } from '../../harness/smtp-session.ts';
import { startWebhookReceiver, type TestWebhookReceiver } from '../../harness/webhook-receiver.ts';
import { type Gateway, startGateway } from '../../src/gateway.ts';
import type { AttachmentEntry } from '../../src/record/message-record.ts';
import { signResthookBody } from '../../src/uploader/resthook-signature.ts';

/**
 * trackCompletion via resthook, on real parts: the gateway subscribes through the mock API,
 * answers its handshake, and takes the signed parse events the mock sends to
 * POST /v1/resthooks over real HTTP. The fallback poll is set an hour out, so an outcome
 * recorded here was pushed. Forged, stale and replayed deliveries are refused or taken once.
 */

interface Subscription {
  identifier: string;
  targetUrl: string;
  event: string;
  workspace: string | null;
  active: boolean;
}

const HOUR = 3_600_000;

describe('parse outcomes by resthook', () => {
  let harness: Harness;
  let receiver: TestWebhookReceiver;
  let target: string;

  async function subscriptions(): Promise<Subscription[]> {
    const response = await fetch(`${harness.mockUrl}/v3/resthook_subscriptions`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    return ((await response.json()) as { results: Subscription[] }).results;
  }

  async function send(to: string, file: string, content?: Buffer): Promise<string> {
    const message = await composeMessage({
      from: 'ann@acme.example',
      to,
      subject: file,
      attachments: [{ filename: file, content: content ?? uniquePdf(`${file}-${Math.random()}`) }],
    });
    return queuedId((await deliver(harness.smtpPort, { to: [to], message })).data);
  }

  /** The entry once its completion is settled (ready or failed). */
  async function settledEntry(id: string): Promise<AttachmentEntry> {
    for (;;) {
      const entry = (await harness.record(id)).attachments[0];
      if (entry?.completion?.state === 'ready' || entry?.completion?.state === 'failed') return entry;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async function postHook(body: string, signature?: string): Promise<{ status: number; text: string }> {
    const response = await fetch(target, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(signature ? { 'x-hook-signature': signature } : {}),
      },
      body,
    });
    return { status: response.status, text: await response.text() };
  }

  beforeAll(async () => {
    receiver = await startWebhookReceiver('resthook-test-secret');
    harness = await startHarness({
      seedMockWorkspaces: true,
      // Two tries, 100 ms apart: a refused delivery is given up quickly.
      mockOptions: { resthookAttempts: 2, resthookRetryDelayMs: 100 },
      events: { webhooks: [{ url: receiver.url, secret: 'resthook-test-secret' }] },
      workspaces: [
        {
          identifier: 'ws-hook',
          ingestEmail: 'hook@ingest.test',
          trackCompletion: { via: 'resthook', firstDelay: HOUR, maxDelay: HOUR, maxTime: 2 * HOUR },
        },
        { identifier: 'ws-poll', ingestEmail: 'poll@ingest.test', trackCompletion: { firstDelay: 100 } },
      ],
    });
    target = `${harness.httpUrl}/v1/resthooks`;
    await harness.logs.waitFor((line) => line.includes('resthook subscriptions in order'));
  });
  afterAll(async () => {
    await harness?.close();
    await receiver?.close();
  });

  it('subscribes the resthook workspace to each parse event, active, at http.publicUrl + /v1/resthooks', async () => {
    const made = await subscriptions();
    expect(made.map((subscription) => subscription.event).sort()).toEqual([
      'document.parse.failed',
      'document.parse.succeeded',
      'document.rejected',
    ]);
    for (const subscription of made) {
      expect(subscription).toMatchObject({ targetUrl: target, workspace: 'ws-hook', active: true });
    }
  });

  it('settles a document from the pushed event and announces document.parsed', async () => {
    const id = await send('hook@ingest.test', 'pushed.pdf');
    const entry = await settledEntry(id);
    expect(entry).toMatchObject({
      state: 'uploaded',
      ready: true,
      completion: { state: 'ready', settledBy: 'resthook', polls: 0 },
    });
    const event = await receiver.waitFor((e) => e.event === 'document.parsed' && e.payload.messageId === id);
    expect(event.payload).toMatchObject({
      workspace: 'ws-hook',
      attachment: { documentIdentifier: entry.documentIdentifier, completion: { state: 'ready' } },
    });
  });

  it('records a failed parse as rejected and announces document.parse_failed', async () => {
    // A PDF cut short (no %%EOF): the mock fails its conversion after answering the upload.
    const cut = Buffer.from(`%PDF-1.4\n1 0 obj\n<< /Note (${Math.random()}) >>\nendobj\n`);
    const id = await send('hook@ingest.test', 'broken.pdf', cut);
    const entry = await settledEntry(id);
    expect(entry.completion).toMatchObject({ state: 'failed', settledBy: 'resthook' });
    expect(entry.state).toBe('rejected');
    await receiver.waitFor((e) => e.event === 'document.parse_failed' && e.payload.messageId === id);
  });

  it('refuses a forged delivery (wrong key) and a stale one, with 401, and changes nothing', async () => {
    const id = await send('hook@ingest.test', 'forged.pdf');
    const { documentIdentifier } = await settledEntry(id);
    const now = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({
      event: 'document.parse.failed',
      timestamp: now,
      payload: { meta: { identifier: documentIdentifier, ready: true, failed: true } },
    });
    const forged = await postHook(body, signResthookBody(body, 'not-the-organization-key', now));
    expect(forged.status).toBe(401);
    expect(forged.text).toContain('does not match');
    const unsigned = await postHook(body);
    expect(unsigned.status).toBe(401);

    const key = harness.mock.organization.resthookSignatureKey;
    const then = now - 600;
    const staleBody = body.replace(String(now), String(then));
    const stale = await postHook(staleBody, signResthookBody(staleBody, key, then));
    expect(stale.status).toBe(401);
    expect(stale.text).toContain('old');
    expect((await harness.record(id)).attachments[0]?.completion?.state).toBe('ready');
  });

  it('takes a replayed delivery once: the second is answered as a repeat and settles nothing', async () => {
    // A pending upload the mock does not finish: the outcome comes only from the delivery below.
    harness.mock.enqueueFault({
      status: 201,
      body: {
        meta: { identifier: 'doc-replayed', fileName: 'replayed.pdf', ready: false, failed: false },
        data: {},
      },
    });
    const id = await send('hook@ingest.test', 'replayed.pdf');
    for (;;) {
      const entry = (await harness.record(id)).attachments[0];
      if (entry?.completion?.state === 'polling') break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const key = harness.mock.organization.resthookSignatureKey;
    const now = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({
      event: 'document.parse.succeeded',
      timestamp: now,
      payload: {
        meta: {
          identifier: 'doc-replayed',
          ready: true,
          failed: false,
          workspace: { identifier: 'ws-hook' },
        },
      },
    });
    const signature = signResthookBody(body, key, now);
    const first = await postHook(body, signature);
    expect(first).toMatchObject({ status: 200 });
    expect(JSON.parse(first.text)).toEqual({ status: 'settled' });
    const replayed = await postHook(body, signature);
    expect(replayed.status).toBe(200);
    expect(JSON.parse(replayed.text)).toEqual({ status: 'repeat: already taken' });
    const entry = await settledEntry(id);
    expect(entry.completion).toMatchObject({ state: 'ready', settledBy: 'resthook' });
    await receiver.waitFor((e) => e.event === 'document.parsed' && e.payload.messageId === id);
    // One announcement: the replay added no delivery.
    const parsed = receiver.events.filter((e) => e.event === 'document.parsed' && e.payload.messageId === id);
    expect(parsed).toHaveLength(1);
  });

  it('keeps an outcome that comes before its upload is recorded, and the upload takes it', async () => {
    const key = harness.mock.organization.resthookSignatureKey;
    const now = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({
      event: 'document.parse.succeeded',
      timestamp: now,
      payload: { meta: { identifier: 'doc-early', ready: true, failed: false } },
    });
    const early = await postHook(body, signResthookBody(body, key, now));
    expect(early.status).toBe(200);
    expect(JSON.parse(early.text)).toEqual({ status: 'kept for its upload' });
    harness.mock.enqueueFault({
      status: 201,
      body: {
        meta: { identifier: 'doc-early', fileName: 'early.pdf', ready: false, failed: false },
        data: {},
      },
    });
    const id = await send('hook@ingest.test', 'early.pdf');
    const entry = await settledEntry(id);
    expect(entry).toMatchObject({
      documentIdentifier: 'doc-early',
      ready: true,
      completion: { state: 'ready', settledBy: 'resthook', polls: 0 },
    });
    await receiver.waitFor((e) => e.event === 'document.parsed' && e.payload.messageId === id);
  });

  it('refuses a handshake when it is making no subscription', async () => {
    const response = await fetch(target, { method: 'POST', headers: { 'x-hook-secret': 'unasked' } });
    expect(response.status).toBe(409);
  });

  it('makes the subscriptions once across instances and restarts', async () => {
    const before = await subscriptions();
    const from = harness.logs.lines.length;
    // Another instance behind the same public URL (its own listener is on another port).
    const second: Gateway = await startGateway({
      config: { ...harness.config, http: { ...harness.config.http, publicUrl: harness.httpUrl } },
      role: 'worker',
      logger: harness.logger,
      redisUrl: harness.redis.url,
      apiBaseUrl: harness.mockUrl,
      apiKey,
    });
    try {
      await harness.logs.waitFor((line) => line.includes('resthook subscriptions in order'), from);
    } finally {
      await second.close();
    }
    expect(await subscriptions()).toEqual(before);
  });

  it('removes the subscriptions when the workspace stops asking for them, and makes them again when it asks', async () => {
    const { config } = harness.gateway.settings.current();
    const polling = {
      ...config,
      workspaces: config.workspaces.map((workspace) =>
        workspace.identifier === 'ws-hook' && workspace.trackCompletion
          ? { ...workspace, trackCompletion: { ...workspace.trackCompletion, via: 'poll' as const } }
          : workspace,
      ),
    };
    let from = harness.logs.lines.length;
    harness.gateway.settings.replace({ ...harness.gateway.settings.current(), config: polling });
    await harness.logs.waitFor((line) => line.includes('resthook subscriptions in order'), from);
    expect(await subscriptions()).toEqual([]);

    from = harness.logs.lines.length;
    harness.gateway.settings.replace({ ...harness.gateway.settings.current(), config });
    await harness.logs.waitFor((line) => line.includes('resthook subscriptions in order'), from);
    expect((await subscriptions()).filter((subscription) => subscription.active)).toHaveLength(3);
  });

  it('makes the subscriptions again when the service dropped one (or deactivated it after failed deliveries)', async () => {
    const [dropped] = await subscriptions();
    expect(dropped).toBeDefined();
    const removed = await fetch(`${harness.mockUrl}/v3/resthook_subscriptions/${dropped?.identifier}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect(removed.status).toBe(204);
    const from = harness.logs.lines.length;
    // A reload checks them, as the periodic check does.
    harness.gateway.settings.replace({ ...harness.gateway.settings.current() });
    await harness.logs.waitFor((line) => line.includes('no longer delivers'), from);
    await harness.logs.waitFor((line) => line.includes('resthook subscriptions in order'), from);
    const now = await subscriptions();
    expect(now.filter((subscription) => subscription.active)).toHaveLength(3);
    expect(now.map((subscription) => subscription.identifier)).not.toContain(dropped?.identifier);
  });
});

/**
 * A split upload (the workspace's splitter on the service): the event for the upload itself
 * comes while its children are pending, so it does not settle it; the fallback poll does,
 * once every child is parsed.
 */
describe('a split document with trackCompletion via resthook', () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startHarness({
      processingMs: 300,
      mockWorkspaces: [
        { identifier: 'ws-split-hook', documentSplitter: { identifier: 'split-pages', name: 'Pages' } },
      ],
      workspaces: [
        {
          identifier: 'ws-split-hook',
          ingestEmail: 'split-hook@ingest.test',
          trackCompletion: { via: 'resthook', firstDelay: 200, maxDelay: 400 },
        },
      ],
    });
    await harness.logs.waitFor((line) => line.includes('resthook subscriptions in order'));
  });
  afterAll(async () => harness?.close());

  it('leaves the upload to the fallback poll, which settles it when every child is parsed', async () => {
    const message = await composeMessage({
      attachments: [{ filename: 'bundle.pdf', content: pdfWithPages(2, { label: 'split-hook' }) }],
    });
    const id = queuedId((await deliver(harness.smtpPort, { to: ['split-hook@ingest.test'], message })).data);
    expect(await harness.settled(id, 0)).toBe('completed');
    await harness.logs.waitFor((line) => line.includes('resthook for a split document: polling settles it'));
    expect(await harness.completed(id, 0)).toBe('completed');
    const [entry] = (await harness.record(id)).attachments;
    expect(entry?.completion).toMatchObject({ state: 'ready', settledBy: 'poll' });
    const parent = harness.mock.documents.get(String(entry?.documentIdentifier));
    expect(parent?.meta.childDocuments).toHaveLength(2);
  });
});
