import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMockApi, type MockApi, type MockApiOptions } from '../../src/mock-parsing-api.ts';
import { pdfWithPages } from '../../src/sample-pdf.ts';
import { asDocument, call, uploadForm } from '../support/mock-api-requests.ts';

/** Resthooks: the X-Hook-Secret handshake, activation, signed events, retries, /_mock/hooks. */

const API_KEY = 'resthook-test-key';
const AUTH = { authorization: `Bearer ${API_KEY}` };
const JSON_AUTH = { ...AUTH, 'content-type': 'application/json' };
const SIGNING_KEY = 'test-signing-key-0123456789';

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A subscriber: records every request and answers with the next scripted status (then 200). */
interface Receiver {
  url: string;
  received: Received[];
  /** Statuses for the coming requests, in order. */
  script: number[];
  /** Resolves once `count` requests in all have arrived. */
  requests(count: number): Promise<Received[]>;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const script: number[] = [];
  const waits = new Set<{ count: number; resolve: (all: Received[]) => void }>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(script.shift() ?? 200).end();
      for (const wait of [...waits]) {
        if (received.length < wait.count) continue;
        waits.delete(wait);
        wait.resolve([...received]);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    script,
    requests: (count) =>
      received.length >= count
        ? Promise.resolve([...received])
        : new Promise((resolve) => waits.add({ count, resolve })),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

let mock: MockApi;
let client: Client;
let receiver: Receiver;

async function startMock(options: Partial<MockApiOptions> = {}): Promise<void> {
  mock = createMockApi({
    apiKey: API_KEY,
    resthookSignatureKey: SIGNING_KEY,
    resthookRetryDelayMs: 10,
    workspaces: [{ identifier: 'ws-1' }, { identifier: 'ws-2' }],
    ...options,
  });
  const { url } = await mock.start({ host: '127.0.0.1', port: 0 });
  client = new Client(url);
}

beforeEach(async () => {
  receiver = await startReceiver();
});

afterEach(async () => {
  await client?.close();
  await mock?.close();
  await receiver.close();
});

let labels = 0;
const upload = (fields: ReadonlyArray<readonly [string, string]>, options: { broken?: boolean } = {}) =>
  call(client, 'POST', '/v3/documents', {
    body: uploadForm(
      {
        bytes: pdfWithPages(1, { label: `hook-${++labels}`, endMarker: !options.broken }),
        name: 'hook.pdf',
        type: 'application/pdf',
      },
      fields,
    ),
    headers: AUTH,
  });

const subscribe = (body: Record<string, unknown>) =>
  call(client, 'POST', '/v3/resthook_subscriptions', { body: JSON.stringify(body), headers: JSON_AUTH });

/** Subscribes and activates with the secret the handshake brought; returns the subscription id. */
async function activeSubscription(body: Record<string, unknown>): Promise<string> {
  const before = receiver.received.length;
  const created = await subscribe({ targetUrl: `${receiver.url}/hooks`, version: 'v3', ...body });
  expect(created.status).toBe(201);
  const handshake = (await receiver.requests(before + 1))[before];
  const secret = handshake?.headers['x-hook-secret'];
  expect(typeof secret).toBe('string');
  const activated = await call(client, 'POST', '/v3/resthook_subscriptions/activate', {
    headers: { ...AUTH, 'x-hook-secret': String(secret) },
  });
  expect(activated.status).toBe(200);
  return (created.json as { identifier: string }).identifier;
}

interface Delivered {
  event: string;
  timestamp: number;
  payload: { meta: { identifier: string; ready: boolean; failed: boolean }; error?: { errorCode: string } };
}
const parse = (request: Received | undefined) => JSON.parse(String(request?.body)) as Delivered;

describe('subscribing', () => {
  it('posts X-Hook-Secret to the target first, and sends nothing until the subscriber activates', async () => {
    await startMock();
    const created = await subscribe({
      targetUrl: `${receiver.url}/hooks`,
      event: 'document.parse.completed',
      workspace: 'ws-1',
      version: 'v3',
    });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      targetUrl: `${receiver.url}/hooks`,
      event: 'document.parse.completed',
      workspace: 'ws-1',
      organization: null,
      version: 'v3',
      active: false,
    });
    // The handshake had arrived before the 201 was sent.
    expect(receiver.received).toHaveLength(1);
    const [handshake] = receiver.received;
    expect(handshake).toMatchObject({ path: '/hooks', body: Buffer.alloc(0) });
    const secret = String(handshake?.headers['x-hook-secret']);
    expect(secret).toMatch(/^[0-9a-f]{64}$/);

    await upload([['workspace', 'ws-1']]);
    expect(mock.hookDeliveries).toHaveLength(0);

    const activated = await call(client, 'POST', '/v3/resthook_subscriptions/activate', {
      headers: { ...AUTH, 'x-hook-secret': secret },
    });
    expect(activated.status).toBe(200);
    expect(activated.json).toMatchObject({ active: true, workspace: 'ws-1' });
    const listed = await call(client, 'GET', '/v3/resthook_subscriptions', { headers: AUTH });
    expect(listed.json).toMatchObject({ count: 1, results: [{ active: true }] });
  });

  it.each([
    { name: 'no secret', headers: AUTH, status: 400 },
    { name: 'an unknown secret', headers: { ...AUTH, 'x-hook-secret': 'f00' }, status: 404 },
    { name: 'no key', headers: { 'x-hook-secret': 'f00' }, status: 401 },
  ])('refuses activation with $name: $status', async ({ headers, status }) => {
    await startMock();
    expect((await call(client, 'POST', '/v3/resthook_subscriptions/activate', { headers })).status).toBe(
      status,
    );
  });

  it.each([
    { name: 'no event', body: { workspace: 'ws-1' }, attr: 'event' },
    { name: 'an unknown event', body: { event: 'document.eaten', workspace: 'ws-1' }, attr: 'event' },
    {
      name: 'both workspace and organization',
      body: { event: 'document.parse.completed', workspace: 'ws-1', organization: 'mock-organization' },
      attr: null,
    },
    { name: 'neither workspace nor organization', body: { event: 'document.parse.completed' }, attr: null },
    {
      name: 'another version',
      body: { event: 'document.parse.completed', workspace: 'ws-1', version: 'v2' },
      attr: 'version',
    },
    {
      name: 'an unknown organization',
      body: { event: 'document.parse.completed', organization: 'nobody' },
      attr: 'organization',
    },
  ])('refuses $name with 400 naming $attr, and makes no handshake', async ({ body, attr }) => {
    await startMock();
    const { status, json } = await subscribe({ targetUrl: `${receiver.url}/hooks`, ...body });
    expect(status).toBe(400);
    expect(json).toMatchObject({
      type: 'validation_error',
      errors: expect.arrayContaining([expect.objectContaining({ attr })]),
    });
    expect(receiver.received).toHaveLength(0);
  });

  it('refuses a target that does not accept the handshake, and one that does not answer', async () => {
    await startMock();
    receiver.script.push(500);
    const refused = await subscribe({
      targetUrl: receiver.url,
      event: 'document.parse.completed',
      workspace: 'ws-1',
    });
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({
      errors: [{ attr: 'targetUrl', detail: expect.stringMatching(/HTTP 500/) }],
    });
    const gone = await startReceiver();
    await gone.close();
    const unreachable = await subscribe({
      targetUrl: gone.url,
      event: 'document.parse.completed',
      workspace: 'ws-1',
    });
    expect(unreachable.status).toBe(400);
    const listed = await call(client, 'GET', '/v3/resthook_subscriptions', { headers: AUTH });
    expect(listed.json).toMatchObject({ count: 0 });
  });

  it('needs the key', async () => {
    await startMock();
    const { status } = await call(client, 'POST', '/v3/resthook_subscriptions', {
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(status).toBe(401);
  });
});

describe('events', () => {
  it('signs each event: X-Hook-Signature is <timestamp>.<hex HMAC-SHA256 of the raw body>', async () => {
    await startMock();
    await activeSubscription({ event: 'document.parse.completed', workspace: 'ws-1' });
    const document = asDocument((await upload([['workspace', 'ws-1']])).json);
    const [, event] = await receiver.requests(2);

    expect(event?.headers['content-type']).toBe('application/json');
    const header = String(event?.headers['x-hook-signature']);
    const [timestamp, signature] = header.split('.');
    const expected = createHmac('sha256', SIGNING_KEY)
      .update(event?.body ?? Buffer.alloc(0))
      .digest('hex');
    expect(signature).toBe(expected);
    const body = parse(event);
    expect(body).toMatchObject({ event: 'document.parse.completed', timestamp: Number(timestamp) });
    expect(Math.abs(body.timestamp - Date.now() / 1000)).toBeLessThan(300);
    expect(body.payload.meta).toMatchObject({
      identifier: document.meta.identifier,
      ready: true,
      failed: false,
    });
    // One key: the one the mock shows, and the one its workspaces' organization has.
    expect(mock.organization.resthookSignatureKey).toBe(SIGNING_KEY);
    const workspace = await call(client, 'GET', '/v3/workspaces/ws-1', { headers: AUTH });
    expect(workspace.json).toMatchObject({ organization: { resthookSignatureKey: SIGNING_KEY } });
  });

  it('generates a key when none is given, exposed on the mock and at /_mock/organization', async () => {
    await startMock({ resthookSignatureKey: undefined });
    const key = mock.organization.resthookSignatureKey;
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect((await call(client, 'GET', '/_mock/organization')).json).toMatchObject({
      resthookSignatureKey: key,
    });
    await activeSubscription({ event: 'document.parse.succeeded', workspace: 'ws-2' });
    await upload([['workspace', 'ws-2']]);
    const [, event] = await receiver.requests(2);
    const signature = String(event?.headers['x-hook-signature']).split('.')[1];
    expect(signature).toBe(
      createHmac('sha256', key)
        .update(event?.body ?? Buffer.alloc(0))
        .digest('hex'),
    );
  });

  it('sends succeeded for a parsed document and failed for a failed one, completed for both', async () => {
    await startMock();
    await activeSubscription({ event: 'document.parse.succeeded', workspace: 'ws-1' });
    await activeSubscription({ event: 'document.parse.failed', workspace: 'ws-1' });
    await activeSubscription({ event: 'document.parse.completed', workspace: 'ws-1' });
    const good = asDocument((await upload([['workspace', 'ws-1']])).json);
    const bad = asDocument((await upload([['workspace', 'ws-1']], { broken: true })).json);
    const deliveries = await mock.waitForHookDeliveries(4);
    const sent = deliveries.map((delivery) => [delivery.event, delivery.documentIdentifier]);
    expect(sent).toEqual([
      ['document.parse.succeeded', good.meta.identifier],
      ['document.parse.completed', good.meta.identifier],
      ['document.parse.failed', bad.meta.identifier],
      ['document.parse.completed', bad.meta.identifier],
    ]);
    const events = (await receiver.requests(7)).slice(3).map(parse);
    const failed = events.find((event) => event.event === 'document.parse.failed');
    expect(failed?.payload.error?.errorCode).toBe('document_conversion_failed');
  });

  it('sends document.rejected for a rejected duplicate and for a file of the wrong type, then completed', async () => {
    await startMock({
      workspaces: [{ identifier: 'ws-1' }, { identifier: 'ws-strict', rejectInvalidDocuments: true }],
    });
    await activeSubscription({ event: 'document.rejected', workspace: 'ws-1' });
    await activeSubscription({ event: 'document.rejected', workspace: 'ws-strict' });
    await activeSubscription({ event: 'document.parse.failed', workspace: 'ws-1' });
    const bytes = pdfWithPages(1, { label: 'duplicate' });
    const form = (workspace: string, file: { bytes: Buffer; name: string; type: string }) =>
      call(client, 'POST', '/v3/documents', {
        body: uploadForm(file, [
          ['workspace', workspace],
          ['rejectDuplicates', 'true'],
        ]),
        headers: AUTH,
      });
    const original = asDocument((await form('ws-1', { bytes, name: 'a.pdf', type: 'application/pdf' })).json);
    const duplicate = asDocument(
      (await form('ws-1', { bytes, name: 'b.pdf', type: 'application/pdf' })).json,
    );
    // Bytes of no supported format (a GIF's signature).
    const gif = Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;', 'latin1');
    const wrongType = asDocument(
      (await form('ws-strict', { bytes: gif, name: 'c.gif', type: 'image/gif' })).json,
    );
    expect(original.meta.failed).toBe(false);
    const deliveries = await mock.waitForHookDeliveries(2);
    expect(deliveries.map((delivery) => [delivery.event, delivery.documentIdentifier])).toEqual([
      ['document.rejected', duplicate.meta.identifier],
      ['document.rejected', wrongType.meta.identifier],
    ]);
    const events = (await receiver.requests(5)).slice(3).map(parse);
    expect(events.map((event) => event.payload.error?.errorCode)).toEqual([
      'duplicate_document',
      'invalid_document_type',
    ]);
  });

  it("sends a workspace's events to its subscribers only, and the organization's to organization subscribers", async () => {
    await startMock();
    await activeSubscription({ event: 'document.parse.completed', workspace: 'ws-2' });
    await activeSubscription({ event: 'document.parse.completed', organization: 'mock-organization' });
    await upload([['workspace', 'ws-1']]);
    await upload([['workspace', 'ws-unknown']]);
    const deliveries = await mock.waitForHookDeliveries(2);
    expect(deliveries.map((delivery) => delivery.subscription)).toEqual(['hook-2', 'hook-2']);
    await upload([['workspace', 'ws-2']]);
    expect((await mock.waitForHookDeliveries(4)).map((delivery) => delivery.subscription).sort()).toEqual([
      'hook-1',
      'hook-2',
      'hook-2',
      'hook-2',
    ]);
  });

  it('sends the event when a pending document finishes, after which a read shows it ready', async () => {
    // Long enough that the read right after the 201 comes before processing ends even on a
    // loaded two-core CI machine (a coarse bound, not a timing assertion).
    await startMock({ processingMs: 5000 });
    await activeSubscription({ event: 'document.parse.completed', workspace: 'ws-1' });
    const created = await upload([
      ['workspace', 'ws-1'],
      ['wait', 'false'],
    ]);
    expect(created.status).toBe(201);
    const id = asDocument(created.json).meta.identifier;
    const pending = await call(client, 'GET', `/v3/documents/${id}`, { headers: AUTH });
    expect(asDocument(pending.json).meta).toMatchObject({ ready: false, readyDt: null });

    const [, event] = await receiver.requests(2);
    expect(parse(event).payload.meta).toMatchObject({ identifier: id, ready: true });
    const finished = await call(client, 'GET', `/v3/documents/${id}`, { headers: AUTH });
    expect(asDocument(finished.json).meta.ready).toBe(true);
  });

  it('stops sending after the subscription is deleted', async () => {
    await startMock();
    const id = await activeSubscription({ event: 'document.parse.completed', workspace: 'ws-1' });
    expect((await call(client, 'DELETE', `/v3/resthook_subscriptions/${id}`, { headers: AUTH })).status).toBe(
      204,
    );
    await upload([['workspace', 'ws-1']]);
    expect(mock.hookDeliveries).toHaveLength(0);
  });
});

describe('delivery failures', () => {
  it('retries a failed delivery and shows every attempt at /_mock/hooks', async () => {
    await startMock();
    await activeSubscription({ event: 'document.parse.completed', workspace: 'ws-1' });
    receiver.script.push(500, 503);
    await upload([['workspace', 'ws-1']]);
    const [delivery] = await mock.waitForHookDeliveries(1);
    expect(delivery?.state).toBe('delivered');
    expect(delivery?.attempts.map((attempt) => attempt.status)).toEqual([500, 503, 200]);
    const hooks = await call(client, 'GET', '/_mock/hooks');
    expect(hooks.json).toMatchObject({
      subscriptions: [{ active: true }],
      deliveries: [{ state: 'delivered', attempts: [{ status: 500 }, { status: 503 }, { status: 200 }] }],
    });
    // Every attempt was signed with its own timestamp, over its own body.
    for (const request of (await receiver.requests(4)).slice(1)) {
      const [timestamp, signature] = String(request.headers['x-hook-signature']).split('.');
      expect(signature).toBe(createHmac('sha256', SIGNING_KEY).update(request.body).digest('hex'));
      expect(parse(request).timestamp).toBe(Number(timestamp));
    }
  });

  it('gives up after the bounded number of attempts', async () => {
    await startMock({ resthookAttempts: 2 });
    await activeSubscription({ event: 'document.parse.completed', workspace: 'ws-1' });
    receiver.script.push(500, 500, 500);
    await upload([['workspace', 'ws-1']]);
    const [delivery] = await mock.waitForHookDeliveries(1);
    expect(delivery).toMatchObject({ state: 'failed', attempts: [{ status: 500 }, { status: 500 }] });
    expect(receiver.received).toHaveLength(3);
  });

  it('records an unreachable target as failed, with the error', async () => {
    await startMock({ resthookAttempts: 1 });
    await activeSubscription({ event: 'document.parse.completed', workspace: 'ws-1' });
    await receiver.close();
    await upload([['workspace', 'ws-1']]);
    const [delivery] = await mock.waitForHookDeliveries(1);
    expect(delivery?.state).toBe('failed');
    expect(delivery?.attempts[0]?.error).toBeTruthy();
  });

  it('deactivates a subscription after deliveries failed in a row, with the reason; a delivered one starts the count over', async () => {
    await startMock({ resthookAttempts: 1, resthookDeactivateAfter: 2 });
    await activeSubscription({ event: 'document.parse.completed', workspace: 'ws-1' });
    receiver.script.push(500, 200, 500, 503);
    for (let sent = 1; sent <= 3; sent++) {
      await upload([['workspace', 'ws-1']]);
      await mock.waitForHookDeliveries(sent);
    }
    let listed = await call(client, 'GET', '/v3/resthook_subscriptions', { headers: AUTH });
    expect(listed.json).toMatchObject({ results: [{ active: true, autoDeactivated: false }] });
    await upload([['workspace', 'ws-1']]);
    await mock.waitForHookDeliveries(4);
    listed = await call(client, 'GET', '/v3/resthook_subscriptions', { headers: AUTH });
    expect(listed.json).toMatchObject({
      results: [
        {
          active: false,
          autoDeactivated: true,
          autoDeactivatedReason: '2 deliveries in a row failed (last: HTTP 503)',
        },
      ],
    });
    // Deactivated: the next document sends nothing.
    await upload([['workspace', 'ws-1']]);
    expect(mock.hookDeliveries).toHaveLength(4);
  });

  it('ends the subscription when the target answers 410 Gone', async () => {
    await startMock();
    await activeSubscription({ event: 'document.parse.completed', workspace: 'ws-1' });
    receiver.script.push(410);
    await upload([['workspace', 'ws-1']]);
    const [delivery] = await mock.waitForHookDeliveries(1);
    expect(delivery).toMatchObject({ state: 'failed', attempts: [{ status: 410 }] });
    const listed = await call(client, 'GET', '/v3/resthook_subscriptions', { headers: AUTH });
    expect(listed.json).toMatchObject({ count: 0 });
  });
});
