import { request } from 'node:http';
import { pdfWithPages } from '@ingest-gateway/mock-parsing-api';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { arcForward, createSigningKey, dkimSignMessage } from '../../harness/dkim-signing.ts';
import { createFakeDns } from '../../harness/dns-fake.ts';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { until } from '../../harness/http-state.ts';
import { type Attachment, composeMessage, uniquePdf } from '../../harness/messages.ts';
import {
  createOpenApiCheck,
  type OpenApiCheck,
  type OpenApiDocument,
  openObjects,
} from '../../harness/openapi-check.ts';
import { deliver, queuedId } from '../../harness/smtp-session.ts';
import { zipArchive } from '../../harness/zip-archive.ts';
import { createOpenApiDocument } from '../../src/http/openapi/document.ts';
import type { MessageRecord } from '../../src/record/message-record.ts';

/**
 * GET /v1/openapi.json against what the gateway really answers: records after real SMTP
 * deliveries whose attachments end in every state (with warnings, a rejection, a refused
 * request, a container path, completion tracking, sender authentication through an ARC
 * chain), the event stream's records, a document source, the failed uploads and their
 * retries, and the refusals (400, 403, 404, 405, 408, 409, 410, 421, 503). Every object of
 * the description is closed, so a field an answer carries that the description does not
 * name fails the check.
 */
describe('GET /v1/openapi.json describes every answer', () => {
  let harness: Harness;
  let api: OpenApiCheck;
  let document: OpenApiDocument;
  const records = new Map<string, MessageRecord>();
  /** The data of every event the stream sent while the messages were delivered. */
  const events: unknown[] = [];
  const stream = new AbortController();
  let streamed: Promise<void>;

  async function call(method: string, path: string, headers: Record<string, string> = {}) {
    const url = `${harness.httpUrl}${path}`;
    const response = await fetch(url, { method, headers });
    return { status: response.status, body: await api.check(method, url, response) };
  }

  async function send(to: string, attachments: Attachment[], signed = false) {
    const message = await composeMessage({ from: 'Ann <ann@acme.example>', to, subject: to, attachments });
    const sent = signed ? await sign(message) : message;
    const { data } = await deliver(harness.smtpPort, {
      from: signed ? 'list-bounce@lists.example' : 'ann@acme.example',
      to: [to],
      message: sent,
    });
    return queuedId(data);
  }

  /** Sends, and waits until every upload of the message has finished. */
  async function settled(to: string, attachments: Attachment[], signed = false): Promise<string> {
    const id = await send(to, attachments, signed);
    const { attachments: entries } = await harness.record(id);
    for (const entry of entries) if (entry.state !== 'skipped') await harness.settled(id, entry.entry);
    return id;
  }

  const dns = createFakeDns({
    'TXT acme.example': ['v=spf1 ip4:192.0.2.10 -all'],
    'TXT lists.example': ['v=spf1 ip4:127.0.0.1 -all'],
  });
  const acme = createSigningKey(dns, 'acme.example', 'sel', 'ed25519');
  const lists = createSigningKey(dns, 'lists.example', 'arc', 'ed25519');
  /** Signed by acme.example, then through a list that tags the subject and seals an ARC set. */
  async function sign(message: Buffer): Promise<Buffer> {
    return arcForward(
      await dkimSignMessage(message, acme),
      {
        key: lists,
        ip: '192.0.2.10',
        helo: 'mx.acme.example',
        mailFrom: 'bounce@acme.example',
        modify: (text) => text.replace(/^Subject: /m, 'Subject: [list] '),
      },
      dns.resolver,
    );
  }

  async function openStream(): Promise<void> {
    const response = await fetch(`${harness.httpUrl}/v1/events`, { signal: stream.signal });
    // Its status and type only: the body is a stream that does not end.
    const head = new Response(null, { status: response.status, headers: response.headers });
    await api.check('GET', response.url, head);
    const reader = response.body?.pipeThrough(new TextDecoderStream()).getReader();
    if (!reader) throw new Error('no event stream body');
    let text = '';
    while (!text.includes(': listening')) text += (await reader.read()).value ?? '';
    streamed = (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        text += value;
        const blocks = text.split('\n\n');
        text = blocks.pop() ?? '';
        for (const block of blocks) {
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (data) events.push(JSON.parse(data));
        }
      }
    })().catch(() => undefined); // the abort that ends the stream
  }

  beforeAll(async () => {
    harness = await startHarness({
      upload: { attempts: 1 },
      auth: { trustedArcSealers: ['lists.example'] },
      resolver: dns.resolver,
      workspaces: [
        {
          identifier: 'ws-parsed',
          ingestEmail: 'parsed@ingest.test',
          archives: 'unpack',
          upload: { wait: true, rejectDuplicates: true },
        },
        { identifier: 'ws-track', ingestEmail: 'track@ingest.test', trackCompletion: { firstDelay: 100 } },
        {
          identifier: 'ws-aligned',
          ingestEmail: 'aligned@ingest.test',
          whitelistIngestAddresses: ['*@acme.example'],
          senderAuthentication: 'aligned',
        },
        {
          identifier: 'ws-held',
          ingestEmail: 'held@ingest.test',
          whitelistIngestAddresses: ['*@partner.example'],
          unlistedSenders: 'hold',
        },
      ],
    });
    const described = await fetch(`${harness.httpUrl}/v1/openapi.json`);
    document = (await described.json()) as OpenApiDocument;
    api = createOpenApiCheck(document);
    await openStream();

    // One message at a time, each settled before the next: the duplicate must come after its
    // original, and the refusal must meet the upload it is meant for.
    const long = pdfWithPages(12, { label: 'openapi-long' });
    const mixed = await settled('parsed@ingest.test', [
      { filename: 'Rechnung März: 12 Seiten.pdf', content: long },
      { filename: 'bundle.zip', content: zipArchive([['inner.pdf', uniquePdf('openapi-inner')]]) },
      {
        filename: 'invite.ics',
        content: Buffer.from('BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n'),
        contentType: 'text/calendar',
      },
    ]);
    const duplicate = await settled('parsed@ingest.test', [{ filename: 'again.pdf', content: long }]);
    harness.mock.enqueueFault({
      status: 400,
      body: { type: 'validation_error', errors: [{ attr: 'file', code: 'invalid', detail: 'refused' }] },
    });
    const refused = await settled('parsed@ingest.test', [
      { filename: 'refused.pdf', content: uniquePdf('refused') },
    ]);
    const tracked = await settled('track@ingest.test', [
      { filename: 'tracked.pdf', content: uniquePdf('tracked') },
    ]);
    const signed = await settled(
      'aligned@ingest.test',
      [{ filename: 'signed.pdf', content: uniquePdf('signed') }],
      true,
    );
    expect(await harness.completed(tracked, 0)).toBe('completed');
    for (const id of [mixed, duplicate, refused, tracked, signed]) {
      const { status, body } = await call('GET', `/v1/messages/${id}`);
      expect(status).toBe(200);
      records.set(id, body as MessageRecord);
    }
  }, 60_000);
  afterAll(async () => {
    stream.abort();
    await harness?.close();
  });

  const entries = () => [...records.values()].flatMap((record) => record.attachments);

  it('is closed: every object schema names all its properties', () => {
    expect(document.paths['/v1/messages']).toBeDefined();
    expect(openObjects(document)).toEqual([]);
  });

  it('describes records whose attachments reach every final state, with every optional part', () => {
    expect(new Set(entries().map((entry) => entry.state))).toEqual(
      new Set(['uploaded', 'rejected', 'failed', 'skipped']),
    );
    expect(entries().find((entry) => entry.state === 'rejected')?.error).toMatchObject({
      errorCode: 'duplicate_document',
    });
    expect(entries().find((entry) => entry.state === 'failed')?.requestError?.type).toBe('validation_error');
    expect(entries().some((entry) => entry.warnings.length > 0 && entry.ready === true)).toBe(true);
    expect(entries().some((entry) => entry.path?.includes('bundle.zip > inner.pdf'))).toBe(true);
    expect(entries().some((entry) => entry.completion?.state === 'ready')).toBe(true);
    const authenticated = [...records.values()].find((record) => record.authentication !== null);
    expect(authenticated?.authentication?.results.arc?.firstHop).not.toBeNull();
    expect(authenticated?.workspaces[0]?.senderAuthentication).toBe('aligned');
  });

  it('describes a record while its attachment uploads, and the page of every record', async () => {
    harness.mock.enqueueFault({ latencyMs: 2000 });
    const id = await send('parsed@ingest.test', [{ filename: 'slow.pdf', content: uniquePdf('slow') }]);
    await until(
      'the attachment to be uploading',
      async () => (await call('GET', `/v1/messages/${id}`)).body as MessageRecord,
      (record) => record.attachments[0]?.state === 'uploading',
    );
    expect(await harness.settled(id, 0)).toBe('completed');
    const { body } = await call('GET', '/v1/messages?limit=100');
    expect((body as { messages: unknown[] }).messages).toHaveLength(records.size + 1);
    expect((await call('GET', '/v1/messages?q=slow&wait=5')).status).toBe(200);
  });

  it('describes each record the event stream sent, as accepted and as settled', async () => {
    stream.abort();
    await streamed;
    const states = events.flatMap((data) => (data as MessageRecord).attachments.map((entry) => entry.state));
    expect(states).toEqual(expect.arrayContaining(['uploaded', 'rejected', 'failed', 'skipped']));
    for (const data of events) api.conforms('Message', data);
  });

  it('describes the document source, the stored bytes and the raw e-mail', async () => {
    const uploaded = entries().find((entry) => entry.state === 'uploaded' && entry.documentIdentifier);
    const failed = [...records.values()].find((record) => record.attachments[0]?.state === 'failed');
    expect((await call('GET', `/v1/documents/${uploaded?.documentIdentifier}`)).status).toBe(200);
    expect((await call('GET', '/v1/documents/unknown')).status).toBe(404);
    expect((await call('GET', `/v1/messages/${failed?.id}/attachments/0`)).status).toBe(200);
    expect((await call('GET', `/v1/messages/${[...records.keys()][0]}/attachments/0`)).status).toBe(410);
    expect((await call('GET', `/v1/messages/${failed?.id}/attachments/9`)).status).toBe(404);
    expect((await call('GET', `/v1/messages/${failed?.id}/raw`)).status).toBe(200);
    expect((await call('GET', '/v1/messages/nosuchid/raw')).status).toBe(404);
    expect((await call('GET', '/v1/messages/nosuchid')).status).toBe(404);
  });

  it('describes the failed uploads and every answer of a retry', async () => {
    const failed = [...records.values()].find((record) => record.attachments[0]?.state === 'failed');
    const { body } = await call('GET', '/v1/uploads');
    expect((body as { uploads: unknown[] }).uploads).toHaveLength(1);
    expect((await call('GET', '/v1/uploads?state=queued&x=1')).status).toBe(400);
    expect((await call('POST', '/v1/uploads/nope-0/retry')).status).toBe(404);
    // Its stored attachment is gone, as when retention.messages has passed.
    const reader = new Redis(harness.redis.url);
    const spans = await reader.keys(`${harness.config.redis.prefix}:{${failed?.id}}:span:*`);
    expect(spans).toHaveLength(1);
    await reader.del(...spans);
    reader.disconnect();
    expect((await call('POST', `/v1/uploads/${failed?.id}-0/retry`)).status).toBe(409);
    expect((await call('POST', '/v1/uploads/retry')).body).toMatchObject({ retried: [] });
  });

  it('describes the release and discard of held mail and their refusals', async () => {
    const released = await send('held@ingest.test', [{ filename: 'held.pdf', content: uniquePdf('held') }]);
    expect((await call('GET', `/v1/messages/${released}`)).body).toMatchObject({ state: 'held' });
    expect((await call('POST', `/v1/messages/${released}/release`)).body).toMatchObject({ queued: 1 });
    expect((await call('POST', `/v1/messages/${released}/release`)).body).toMatchObject({ queued: 0 });
    expect((await call('POST', `/v1/messages/${released}/discard`)).status).toBe(409);
    expect((await call('POST', '/v1/messages/nosuchid/release')).status).toBe(404);
    const discarded = await send('held@ingest.test', [{ filename: 'gone.pdf', content: uniquePdf('gone') }]);
    const answer = await call('POST', `/v1/messages/${discarded}/discard`);
    expect(answer.body).toMatchObject({ queued: 0, record: { state: 'discarded' } });
    expect((await call('POST', '/v1/messages/nosuchid/discard')).status).toBe(404);
    await harness.settled(released, 0);
  });

  it('describes the refusal log with a refused recipient', async () => {
    await deliver(harness.smtpPort, { to: ['nobody@ingest.test'], message: 'x\r\n' });
    await expect
      .poll(
        async () => ((await call('GET', '/v1/refusals?to=nobody')).body as { refusals: unknown[] }).refusals,
      )
      .toHaveLength(1);
    expect((await call('GET', '/v1/refusals?limit=1')).status).toBe(200);
    expect((await call('GET', '/v1/refusals?stage=quit')).status).toBe(400);
  });

  it('describes the deletion of one message', async () => {
    const id = await settled('parsed@ingest.test', [
      { filename: 'deleted.pdf', content: uniquePdf('openapi-delete') },
    ]);
    expect((await call('DELETE', `/v1/messages/${id}`)).status).toBe(200);
    expect((await call('DELETE', '/v1/messages/nosuchid')).status).toBe(404);
  });

  it('describes the failed webhook deliveries and a retry of none', async () => {
    const { status, body } = await call('GET', '/v1/webhooks/deliveries?state=failed');
    expect(status).toBe(200);
    expect(body).toEqual({ deliveries: [] });
    expect((await call('GET', '/v1/webhooks/deliveries?state=delivered')).status).toBe(400);
    expect((await call('POST', '/v1/webhooks/deliveries/nope/retry')).status).toBe(404);
  });

  it("describes the answers to the service's parse events: no signature, an unasked handshake", async () => {
    expect((await call('POST', '/v1/resthooks')).status).toBe(401);
    expect(
      (
        await call('POST', '/v1/resthooks', {
          'x-hook-signature': `${Math.floor(Date.now() / 1000)}.${'0'.repeat(64)}`,
        })
      ).status,
    ).toBe(401);
    expect((await call('POST', '/v1/resthooks', { 'x-hook-secret': 'unasked' })).status).toBe(409);
  });

  it.each([
    ['GET', '/v1/messages?state=done&limit=0', 400],
    ['GET', '/v1/events?limit=5', 400],
    ['GET', '/v1/messages?q=never-sent&wait=1', 408],
    ['DELETE', '/v1/messages', 403],
    ['GET', '/v1/uploads/retry', 405],
    ['PUT', '/v1/messages/nosuchid', 405],
    ['POST', '/healthz', 405],
    ['GET', '/no/such/route', 404],
    ['GET', '/healthz', 200],
    ['GET', '/readyz', 200],
    ['GET', '/metrics', 200],
  ])('describes %s %s: %i', async (method, path, status) => {
    expect((await call(method, path)).status).toBe(status);
  });

  it('describes the refusal of a state change from another origin: 403', async () => {
    const answer = await call('POST', '/v1/uploads/retry', { origin: 'http://attacker.example' });
    expect(answer.status).toBe(403);
  });

  it('describes the refusal of a Host it does not answer: 421', async () => {
    const url = `${harness.httpUrl}/v1/messages`;
    const response = await new Promise<Response>((resolve, reject) => {
      const req = request(url, { headers: { host: 'rebound.attacker.example' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const headers = Object.entries(res.headers).flatMap(([name, value]) =>
            typeof value === 'string' ? [[name, value] as [string, string]] : [],
          );
          resolve(new Response(Buffer.concat(chunks), { status: res.statusCode ?? 0, headers }));
        });
      });
      req.on('error', reject);
      req.end();
    });
    expect(response.status).toBe(421);
    await api.check('GET', url, response);
  });

  it('is what GET /v1/openapi.json answers, for the URL the API listens on', async () => {
    const { status, body } = await call('GET', '/v1/openapi.json');
    expect(status).toBe(200);
    expect(body).toEqual(JSON.parse(JSON.stringify(createOpenApiDocument(harness.httpUrl))));
    expect((body as OpenApiDocument & { servers: Array<{ url: string }> }).servers[0]?.url).toBe(
      harness.httpUrl,
    );
  });

  it('describes readiness lost (503) once the service refuses the API key, and a record left queued', async () => {
    harness.mock.enqueueFault({ status: 401 });
    const id = await send('parsed@ingest.test', [{ filename: 'paused.pdf', content: uniquePdf('paused') }]);
    const answer = await until(
      '/readyz to answer 503',
      () => call('GET', '/readyz'),
      ({ status }) => status === 503,
    );
    expect(answer.body).toMatchObject({ ready: false, worker: expect.stringContaining('API key') });
    // The paused worker hands its job back: the attachment waits, queued, for a worker.
    const waiting = await until(
      'the attachment to be queued again',
      async () => (await call('GET', `/v1/messages/${id}`)).body as MessageRecord,
      (record) => record.attachments[0]?.state === 'queued',
    );
    expect(waiting.status).toBe('enqueued');
  });

  it('fails an answer that carries a field the description does not name', async () => {
    const record = [...records.values()][0];
    const url = `${harness.httpUrl}/v1/messages/${record?.id}`;
    const extra = Response.json({ ...record, unnamed: true });
    await expect(api.check('GET', url, extra)).rejects.toThrow(/must NOT have additional properties/);
  });

  it('was called on every route and method it documents', () => {
    expect(api.unexercised()).toEqual([]);
  });
});
