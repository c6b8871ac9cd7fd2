import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { createOpenApiCheck, type OpenApiCheck, type OpenApiDocument } from '../../harness/openapi-check.ts';
import { deliver, queuedId } from '../../harness/smtp-session.ts';
import { createOpenApiDocument } from '../../src/http/openapi/document.ts';
import { createKeySpace, type KeySpace } from '../../src/record/keys.ts';
import type { MessageRecord } from '../../src/record/message-record.ts';

interface Page {
  messages: MessageRecord[];
  nextCursor: string | null;
}

/**
 * The record API for tests and tools: search, long poll, failed uploads and reset. Every
 * answer in this file is validated against GET /v1/openapi.json, and the last test proves
 * that every documented route and method was called.
 */
describe('HTTP API: messages, uploads, reset', () => {
  let harness: Harness;
  let reader: Redis;
  let keys: KeySpace;
  /** The harness's key prefix, for patterns. */
  let prefix: string;
  /** The checker of the gateway's own GET /v1/openapi.json. */
  let api: OpenApiCheck;
  /** The three messages sent first, in the order sent. */
  const sent: Record<'alpha' | 'beta' | 'gamma', string> = { alpha: '', beta: '', gamma: '' };
  let betaBytes: Buffer;

  async function call(method: string, path: string): Promise<{ status: number; body: unknown }> {
    const url = `${harness.httpUrl}${path}`;
    const response = await fetch(url, { method });
    return { status: response.status, body: await api.check(method, url, response) };
  }

  async function list(query: string): Promise<Page> {
    const { status, body } = await call('GET', `/v1/messages?${query}`);
    expect(status, query).toBe(200);
    return body as Page;
  }

  const ids = (page: Page) => page.messages.map((message) => message.id);

  async function send(options: {
    from: string;
    mailFrom?: string;
    to: string;
    subject: string;
    file: string;
  }): Promise<{ id: string; bytes: Buffer }> {
    const bytes = await composeMessage({
      from: options.from,
      to: options.to,
      subject: options.subject,
      attachments: [{ filename: options.file, content: uniquePdf(`${options.file}-${Math.random()}`) }],
    });
    const reply = await deliver(harness.smtpPort, {
      ...(options.mailFrom ? { from: options.mailFrom } : {}),
      to: [options.to],
      message: bytes,
    });
    return { id: queuedId(reply.data), bytes };
  }

  function failNextUpload(label: string): void {
    harness.mock.enqueueFault({
      status: 400,
      body: {
        type: 'validation_error',
        errors: [{ attr: 'file', code: 'invalid', detail: `refused ${label}` }],
      },
    });
  }

  beforeAll(async () => {
    harness = await startHarness({ upload: { attempts: 1 }, http: { allowReset: true } });
    const described = await fetch(`${harness.httpUrl}/v1/openapi.json`);
    api = createOpenApiCheck((await described.json()) as OpenApiDocument);
    prefix = harness.config.redis.prefix;
    keys = createKeySpace(prefix);
    reader = new Redis(harness.redis.url);
    sent.alpha = (
      await send({
        from: 'Ann <ann@acme.example>',
        to: 'documents@ingest.test',
        subject: 'Alpha order',
        file: 'alpha.pdf',
      })
    ).id;
    expect(await harness.settled(sent.alpha, 0)).toBe('completed');
    const beta = await send({
      from: 'AP <ap@partner.example>',
      mailFrom: 'bounce@partner.example',
      to: 'invoices@ingest.test',
      subject: 'Your invoice',
      file: 'beta.pdf',
    });
    sent.beta = beta.id;
    betaBytes = beta.bytes;
    expect(await harness.settled(sent.beta, 0)).toBe('completed');
    failNextUpload('gamma');
    sent.gamma = (
      await send({
        from: 'Cy <cy@acme.example>',
        to: 'documents@ingest.test',
        subject: 'Gamma',
        file: 'gamma.pdf',
      })
    ).id;
    expect(await harness.settled(sent.gamma, 0)).toBe('failed');
  });
  afterAll(async () => {
    reader?.disconnect();
    await harness?.close();
  });

  it('lists the messages newest first, each as its full record', async () => {
    const page = await list('');
    expect(ids(page)).toEqual([sent.gamma, sent.beta, sent.alpha]);
    expect(page.nextCursor).toBeNull();
    const { body } = await call('GET', `/v1/messages/${sent.beta}`);
    expect(page.messages[1]).toEqual(body);
  });

  it.each([
    ['from: header From, substring, any case', 'from=ACME.example', ['gamma', 'alpha']],
    ['from: the envelope sender', 'from=bounce@partner.example', ['beta']],
    ['to: any recipient', 'to=invoices@ingest', ['beta']],
    ['workspace: exact identifier', 'workspace=ws-acme', ['beta']],
    ['workspace: no partial match', 'workspace=ws-', []],
    ['state: any attachment in it', 'state=failed', ['gamma']],
    ['q: the subject', 'q=alpha%20ORDER', ['alpha']],
    ['q: a file name', 'q=beta.pdf', ['beta']],
    ['several filters together', 'from=acme.example&state=uploaded', ['alpha']],
  ] as const)('filters by %s', async (_name, query, expected) => {
    expect(ids(await list(query))).toEqual(expected.map((name) => sent[name]));
  });

  it('filters by since: received at or after that time', async () => {
    const beta = (await list(`q=beta.pdf`)).messages[0];
    expect(ids(await list(`since=${encodeURIComponent(beta?.receivedAt ?? '')}`))).toEqual([
      sent.gamma,
      sent.beta,
    ]);
    expect(ids(await list('since=2999-01-01T00:00:00Z'))).toEqual([]);
  });

  it('pages by cursor: every message once, in order, then no cursor', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let round = 0; round < 5; round++) {
      const page: Page = await list(`limit=1${cursor === null ? '' : `&cursor=${cursor}`}`);
      seen.push(...ids(page));
      expect(page.messages.length).toBeLessThanOrEqual(1);
      cursor = page.nextCursor;
      if (cursor === null) break;
    }
    expect(cursor).toBeNull();
    expect(seen).toEqual([sent.gamma, sent.beta, sent.alpha]);
  });

  it.each([
    ['an unknown parameter', 'sender=x', /unknown parameter/],
    ['an unknown state', 'state=done', /state: expected one of queued, uploading/],
    ['a time that is not ISO 8601', 'since=yesterday', /since: expected an ISO 8601 time/],
    ['a limit over the maximum', 'limit=101', /limit/],
    ['a cursor it did not give', 'cursor=bm9wZQ', /cursor: not a cursor/],
    ['a wait over the maximum', 'wait=121', /wait/],
    ['a parameter given twice', 'q=a&q=b', /q: given more than once/],
  ])('refuses %s with 400 naming the problem', async (_name, query, problem) => {
    const { status, body } = await call('GET', `/v1/messages?${query}`);
    expect(status).toBe(400);
    expect((body as { problems: string[] }).problems.join('\n')).toMatch(problem);
  });

  it('long-polls: answers once the matching message is sent and every attachment has settled', async () => {
    const polled = call('GET', '/v1/messages?q=delta-report&wait=30');
    // Nothing matches yet: the poll is waiting, and answers for the message sent now.
    const { id } = await send({
      from: 'Dee <dee@acme.example>',
      to: 'documents@ingest.test',
      subject: 'delta-report',
      file: 'delta.pdf',
    });
    const { status, body } = await polled;
    expect(status).toBe(200);
    const page = body as Page;
    expect(ids(page)).toEqual([id]);
    expect(page.messages[0]?.attachments.map((attachment) => attachment.state)).toEqual(['uploaded']);
  });

  it('long-polls: answers at once for a message already settled', async () => {
    const { status, body } = await call('GET', '/v1/messages?q=alpha&wait=30');
    expect(status).toBe(200);
    expect(ids(body as Page)).toEqual([sent.alpha]);
  });

  it('long-polls: answers 408 when nothing matching settles in time', async () => {
    const { status, body } = await call('GET', '/v1/messages?q=never-sent&wait=1');
    expect(status).toBe(408);
    expect(body).toEqual({ error: 'no matching message settled within 1 s' });
  });

  it('lists failed uploads, and refuses other states', async () => {
    const { status, body } = await call('GET', '/v1/uploads?state=failed');
    expect(status).toBe(200);
    expect((body as { uploads: unknown[] }).uploads).toEqual([
      expect.objectContaining({ jobId: `${sent.gamma}-0`, fileName: 'gamma.pdf', retryable: true }),
    ]);
    expect((await call('GET', '/v1/uploads?state=queued')).status).toBe(400);
  });

  it('retries one failed upload into an uploaded document; 404 for a job that is no failed upload', async () => {
    expect(await call('POST', '/v1/uploads/nope-0/retry')).toEqual({
      status: 404,
      body: { error: 'upload nope-0 not retried: not a failed upload' },
    });
    const jobId = `${sent.gamma}-0`;
    expect(await call('POST', `/v1/uploads/${jobId}/retry`)).toEqual({
      status: 200,
      body: { retried: [jobId], refused: [] },
    });
    expect(await harness.settled(sent.gamma, 0)).toBe('completed');
    expect(ids(await list('state=uploaded&q=gamma'))).toEqual([sent.gamma]);
  });

  it('retries every failed upload; 409 for one whose attachment has expired', async () => {
    failNextUpload('epsilon');
    const { id } = await send({
      from: 'Eve <eve@acme.example>',
      to: 'documents@ingest.test',
      subject: 'Epsilon',
      file: 'epsilon.pdf',
    });
    expect(await harness.settled(id, 0)).toBe('failed');
    failNextUpload('zeta');
    const zeta = (
      await send({
        from: 'Zed <zed@acme.example>',
        to: 'documents@ingest.test',
        subject: 'Zeta',
        file: 'zeta.pdf',
      })
    ).id;
    expect(await harness.settled(zeta, 0)).toBe('failed');
    // Zeta's stored attachment is gone, as when retention.messages has passed.
    const stored = await reader.keys(`${prefix}:{${zeta}}:span:*`);
    expect(stored).toHaveLength(1);
    await reader.del(...stored);
    expect((await call('POST', `/v1/uploads/${zeta}-0/retry`)).status).toBe(409);

    const { status, body } = await call('POST', '/v1/uploads/retry');
    expect(status).toBe(200);
    expect(body).toEqual({
      retried: [`${id}-0`],
      refused: [{ jobId: `${zeta}-0`, reason: 'the stored attachment has expired' }],
    });
    expect(await harness.settled(id, 0)).toBe('completed');
  });

  it('drops index entries whose record has expired, when a listing meets them', async () => {
    await reader.del(keys.message(sent.alpha).record);
    expect(ids(await list('from=acme.example'))).not.toContain(sent.alpha);
    expect(await reader.zscore(keys.messageIndex, sent.alpha)).toBeNull();
  });

  it('a record missing from the index is still read by id, and a repeated delivery indexes it again', async () => {
    // The state a crash between the commit and the index leaves: committed, not indexed.
    await reader.zrem(keys.messageIndex, sent.beta);
    await reader.hset(keys.message(sent.beta).record, 'status', 'committed');
    expect(ids(await list('q=beta.pdf'))).toEqual([]);
    expect((await call('GET', `/v1/messages/${sent.beta}`)).status).toBe(200);

    const again = await deliver(harness.smtpPort, {
      from: 'bounce@partner.example',
      to: ['invoices@ingest.test'],
      message: betaBytes,
    });
    expect(queuedId(again.data)).toBe(sent.beta);
    expect(ids(await list('q=beta.pdf'))).toEqual([sent.beta]);
  });

  it('serves the routes that were there before, as documented', async () => {
    expect((await call('GET', '/healthz')).status).toBe(200);
    expect((await call('GET', '/readyz')).status).toBe(200);
    expect((await call('GET', '/metrics')).status).toBe(200);
    expect((await call('GET', `/v1/messages/${sent.gamma}/raw`)).status).toBe(200);
    expect((await call('GET', '/v1/messages/nosuchid/raw')).status).toBe(404);
    expect((await call('GET', '/v1/messages/nosuchid')).status).toBe(404);
    // Uploaded: its bytes were released.
    expect((await call('GET', `/v1/messages/${sent.gamma}/attachments/0`)).status).toBe(410);
    expect((await call('GET', `/v1/messages/${sent.gamma}/attachments/9`)).status).toBe(404);
    expect((await call('GET', '/v1/events?cursor=abc')).status).toBe(400);
    expect((await call('GET', '/v1/refusals?stage=rcpt&limit=5')).status).toBe(200);
    expect((await call('GET', '/v1/refusals?stage=helo')).status).toBe(400);
    const identifier = harness.mock.uploads[0]?.documentIdentifier ?? '';
    expect((await call('GET', `/v1/documents/${identifier}`)).status).toBe(200);
    expect((await call('GET', '/v1/documents/unknown')).status).toBe(404);
    const { status, body } = await call('GET', '/v1/openapi.json');
    expect(status).toBe(200);
    expect(body).toEqual(JSON.parse(JSON.stringify(createOpenApiDocument(harness.httpUrl))));
  });

  it('erases everything under the prefix with DELETE /v1/messages, and takes mail again after it', async () => {
    const { status, body } = await call('DELETE', '/v1/messages');
    expect(status).toBe(200);
    expect((body as { deleted: number }).deleted).toBeGreaterThan(0);
    expect(await reader.keys(`${prefix}:{*}:*`)).toEqual([]);
    expect(await reader.keys(`${prefix}:doc:*`)).toEqual([]);
    expect(await reader.keys(`${prefix}:delivery:*`)).toEqual([]);
    expect(await reader.exists(keys.messageIndex)).toBe(0);
    expect(await reader.keys(`${prefix}:{queue}:uploads:${sent.gamma}-0`)).toEqual([]);
    expect(ids(await list(''))).toEqual([]);
    expect((await call('GET', '/v1/uploads')).body).toEqual({ uploads: [] });

    const { id } = await send({
      from: 'Ann <ann@acme.example>',
      to: 'documents@ingest.test',
      subject: 'After reset',
      file: 'after.pdf',
    });
    expect(await harness.settled(id, 0)).toBe('completed');
    expect(ids(await list(''))).toEqual([id]);
  });

  it('streams each new message and each settle as server-sent events, filtered like the listing', async () => {
    const stream = await fetch(`${harness.httpUrl}/v1/events?from=events.example`);
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const reader = stream.body?.pipeThrough(new TextDecoderStream()).getReader();
    if (!reader) throw new Error('no event stream body');
    // The stream opens with its retry interval: the feed listens from here on.
    let text = '';
    while (!text.includes(': listening')) text += (await reader.read()).value ?? '';

    await send({
      from: 'Other <o@elsewhere.example>',
      to: 'documents@ingest.test',
      subject: 'Unseen',
      file: 'o.pdf',
    });
    const { id } = await send({
      from: 'Eve <eve@events.example>',
      to: 'documents@ingest.test',
      subject: 'Streamed',
      file: 'streamed.pdf',
    });
    const events: MessageRecord[] = [];
    while (!events.some((record) => record.attachments[0]?.state === 'uploaded')) {
      text += (await reader.read()).value ?? '';
      const blocks = text.split('\n\n');
      text = blocks.pop() ?? '';
      for (const block of blocks) {
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (/^event: message$/m.test(block) && data) events.push(JSON.parse(data) as MessageRecord);
      }
    }
    await reader.cancel();
    // Only the matching message: first as accepted (queued), then as settled.
    expect(events.map((record) => record.id)).toEqual(events.map(() => id));
    expect(events.length).toBeGreaterThanOrEqual(1);
    expect(events.at(-1)?.subject).toBe('Streamed');
  });

  it('answers release and discard of a message that is not held: 404 unknown, 409 not held', async () => {
    expect((await call('POST', '/v1/messages/nosuchmessage/release')).status).toBe(404);
    expect((await call('POST', '/v1/messages/nosuchmessage/discard')).status).toBe(404);
    const { id } = await send({
      from: 'ann@acme.example',
      to: 'documents@ingest.test',
      subject: 'Not held',
      file: 'taken.pdf',
    });
    expect(await harness.settled(id, 0)).toBe('completed');
    expect((await call('POST', `/v1/messages/${id}/release`)).status).toBe(409);
    expect((await call('POST', `/v1/messages/${id}/discard`)).status).toBe(409);
  });

  it('deletes one message: its record, raw copy and listing entry; the same bytes again are new', async () => {
    const first = await send({
      from: 'Del <del@acme.example>',
      to: 'documents@ingest.test',
      subject: 'To delete',
      file: 'delete-me.pdf',
    });
    expect(await harness.settled(first.id, 0)).toBe('completed');
    expect(await call('DELETE', `/v1/messages/${first.id}`)).toEqual({
      status: 200,
      body: { deleted: first.id },
    });
    expect((await call('GET', `/v1/messages/${first.id}`)).status).toBe(404);
    expect((await call('DELETE', `/v1/messages/${first.id}`)).status).toBe(404);
    expect(await reader.keys(`${prefix}:{${first.id}}:*`)).toEqual([]);
    expect(ids(await list('q=delete-me.pdf'))).toEqual([]);
    // The delivery is forgotten with it: the same bytes to the same recipient are a new message.
    const again = await deliver(harness.smtpPort, { to: ['documents@ingest.test'], message: first.bytes });
    expect(queuedId(again.data)).not.toBe(first.id);
  });

  it('lists no failed webhook deliveries without receivers, and retries none', async () => {
    expect(await call('GET', '/v1/webhooks/deliveries?state=failed')).toEqual({
      status: 200,
      body: { deliveries: [] },
    });
    expect((await call('POST', '/v1/webhooks/deliveries/nope/retry')).status).toBe(404);
  });

  it("refuses a parse event without the service's signature, and a handshake it did not ask for", async () => {
    const url = `${harness.httpUrl}/v1/resthooks`;
    const unsigned = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ event: 'document.parse.succeeded', timestamp: 1, payload: {} }),
    });
    expect(unsigned.status).toBe(401);
    expect(await api.check('POST', url, unsigned)).toMatchObject({ error: 'no X-Hook-Signature header' });
    const handshake = await fetch(url, { method: 'POST', headers: { 'x-hook-secret': 'unasked' } });
    expect(handshake.status).toBe(409);
    await api.check('POST', url, handshake);
  });

  it('was called on every route and method the OpenAPI description documents', () => {
    expect(api.unexercised()).toEqual([]);
  });
});
