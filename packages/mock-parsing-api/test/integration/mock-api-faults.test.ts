import { Client } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMockApi, type MockApi } from '../../src/mock-parsing-api.ts';
import { pdfWithPages } from '../../src/sample-pdf.ts';
import { asDocument, call, uploadForm } from '../support/mock-api-requests.ts';
import { until } from '../support/until.ts';

/** Every kind of injected fault, per request (X-Mock-Fault) and through /_mock/faults. */

const API_KEY = 'faults-test-key';
const AUTH = { authorization: `Bearer ${API_KEY}` };

/**
 * What a client sees when the connection goes away under it: undici's socket error, or the
 * operating system's when the close lands while the client is still writing the body.
 */
const socketError = { code: expect.stringMatching(/^(UND_ERR_SOCKET|EPIPE|ECONNRESET)$/) };

let mock: MockApi;
let url: string;
let client: Client;

beforeEach(async () => {
  mock = createMockApi({ apiKey: API_KEY });
  ({ url } = await mock.start({ host: '127.0.0.1', port: 0 }));
  client = new Client(url);
});

afterEach(async () => {
  await client.close();
  await mock.close();
});

let labels = 0;
const pdfFile = () => ({
  bytes: pdfWithPages(1, { label: `f${++labels}` }),
  name: 'f.pdf',
  type: 'application/pdf',
});
const upload = (headers: Record<string, string> = {}, target = client) =>
  call(target, 'POST', '/v3/documents', { body: uploadForm(pdfFile()), headers: { ...AUTH, ...headers } });
const postFault = (fault: unknown) =>
  call(client, 'POST', '/_mock/faults', {
    body: JSON.stringify(fault),
    headers: { 'content-type': 'application/json' },
  });

describe('status faults', () => {
  it('answers X-Mock-Fault: status=503 with a server_error RequestError and records nothing', async () => {
    const { status, json } = await upload({ 'x-mock-fault': 'status=503' });
    expect(status).toBe(503);
    expect(json).toMatchObject({ type: 'server_error', errors: [{ attr: null, code: 'error' }] });
    expect(mock.uploads).toHaveLength(0);
    expect((await upload()).status).toBe(200);
  });

  it.each([
    {
      via: 'the header',
      inject: () => upload({ 'x-mock-fault': 'status=429; retry-after=2' }),
      retryAfter: '2',
    },
    {
      via: '/_mock/faults',
      inject: async () => {
        expect((await postFault({ status: 429, retryAfter: 5 })).status).toBe(204);
        return upload();
      },
      retryAfter: '5',
    },
  ])('answers 429 with Retry-After through $via', async ({ inject, retryAfter }) => {
    const { status, headers, json } = await inject();
    expect(status).toBe(429);
    expect(headers['retry-after']).toBe(retryAfter);
    expect(json).toMatchObject({ type: 'client_error', errors: [{ code: 'throttled' }] });
  });

  it.each([500, 502, 504, 599])('answers any 5xx: %i', async (code) => {
    expect((await upload({ 'x-mock-fault': `status=${code}` })).status).toBe(code);
  });

  it('serves a fault before authentication, so it reaches a client without the key', async () => {
    const { status } = await call(client, 'POST', '/v3/documents', {
      body: uploadForm(pdfFile()),
      headers: { 'x-mock-fault': 'status=502' },
    });
    expect(status).toBe(502);
  });

  it('applies a header fault to any /v3 request, a read included', async () => {
    const { status } = await call(client, 'GET', '/v3/documents/none', {
      headers: { ...AUTH, 'x-mock-fault': 'status=503' },
    });
    expect(status).toBe(503);
  });

  it('refuses a malformed X-Mock-Fault with 400 invalid_mock_fault', async () => {
    const { status, json } = await upload({ 'x-mock-fault': 'status=503; explode' });
    expect(status).toBe(400);
    expect(json).toMatchObject({
      errors: [{ code: 'invalid_mock_fault', detail: expect.stringMatching(/explode/) }],
    });
    expect(mock.uploads).toHaveLength(0);
  });
});

describe('dropped connections', () => {
  it.each([
    { via: 'the header', inject: () => upload({ 'x-mock-fault': 'drop=before' }) },
    {
      via: '/_mock/faults',
      inject: async () => {
        await postFault({ drop: 'before' });
        return upload();
      },
    },
  ])('drop=before through $via: a socket error, and no upload recorded', async ({ inject }) => {
    await expect(inject()).rejects.toMatchObject(socketError);
    expect(mock.uploads).toHaveLength(0);
    expect(mock.documents.size).toBe(0);
    expect(mock.creditsUsed).toBe(0);
    expect((await upload()).status).toBe(200);
  });

  it.each([
    { via: 'the header', inject: () => upload({ 'x-mock-fault': 'drop=after' }) },
    {
      via: '/_mock/faults',
      inject: async () => {
        await postFault({ drop: 'after' });
        return upload();
      },
    },
  ])(
    'drop=after through $via: the upload is recorded and the client sees a socket error',
    async ({ inject }) => {
      await expect(inject()).rejects.toMatchObject(socketError);
      expect(mock.uploads).toHaveLength(1);
      const [upload] = mock.uploads;
      expect(mock.documents.get(String(upload?.documentIdentifier))?.meta.ready).toBe(true);
      expect(mock.creditsUsed).toBe(1);
    },
  );
});

describe('hangs and latency', () => {
  it("hangs until the client's own timeout fires, recording nothing", async () => {
    const impatient = new Client(url, { headersTimeout: 300 });
    try {
      await expect(upload({ 'x-mock-fault': 'hang' }, impatient)).rejects.toMatchObject({
        code: 'UND_ERR_HEADERS_TIMEOUT',
      });
    } finally {
      await impatient.destroy();
    }
    expect(mock.uploads).toHaveLength(0);
  });

  it('commits an upload late, after its client has given up, and answers one still waiting', async () => {
    // Committed seconds after the client gives up, so that nothing is committed yet when the
    // test reads, however long its steps take on busy cores.
    mock.enqueueFault({ commitDelayMs: 3000 });
    // A client that gives up after 150 ms, long before the document is created.
    const impatient = new Client(url);
    try {
      const givingUp = impatient.request({
        method: 'POST',
        path: '/v3/documents',
        headers: AUTH,
        body: uploadForm(pdfFile()),
        signal: AbortSignal.timeout(150),
      });
      await expect(givingUp).rejects.toMatchObject({ name: 'TimeoutError' });
    } finally {
      await impatient.destroy();
    }
    // Read at once, created only after the delay: nothing yet when the client gave up.
    expect(mock.uploads).toHaveLength(0);
    const [late] = await mock.waitForUploads(1);
    expect(mock.documents.has(String(late?.documentIdentifier))).toBe(true);

    mock.enqueueFault({ commitDelayMs: 50 });
    expect((await upload()).status).toBe(200);
    expect(mock.uploads).toHaveLength(2);
    expect((await postFault({ commitDelayMs: 10, drop: 'after' })).status).toBe(400);
  });

  it('releases a hung request on close()', async () => {
    mock.enqueueFault({ hang: true });
    const hanging = upload();
    // The request has taken the fault, so it is the one left unanswered.
    // Read on a connection of its own: the client's one is held by the hung upload.
    await until(
      async () => (await (await fetch(`${url}/_mock/faults`)).json()) as { faults: unknown[] },
      ({ faults }) => faults.length === 0,
    );
    await mock.close();
    await expect(hanging).rejects.toMatchObject(socketError);
  });

  it('answers after injected latency, through the header and the queue', async () => {
    const delayed = await upload({ 'x-mock-fault': 'latency=150' });
    expect(delayed.status).toBe(200);
    expect(asDocument(delayed.json).meta.ready).toBe(true);
    mock.enqueueFault({ latencyMs: 100, status: 502 });
    expect((await upload()).status).toBe(502);
  });

  it('refuses latency past its bound', async () => {
    expect((await postFault({ latencyMs: 10 * 60_000 })).status).toBe(400);
    expect((await upload({ 'x-mock-fault': 'latency=600000' })).status).toBe(400);
  });
});

describe('the fault queue over HTTP', () => {
  it('serves a fault to the next N requests, then answers normally', async () => {
    await postFault({ status: 503, times: 2 });
    expect((await upload()).status).toBe(503);
    expect((await upload()).status).toBe(503);
    expect((await upload()).status).toBe(200);
  });

  it('serves an "always" fault until DELETE /_mock/faults', async () => {
    await postFault({ status: 500, times: 'always' });
    for (let i = 0; i < 3; i++) expect((await upload()).status).toBe(500);
    const listed = await call(client, 'GET', '/_mock/faults');
    expect(listed.json).toMatchObject({
      faults: [{ remaining: null, method: 'POST', path: '/v3/documents' }],
    });
    expect((await call(client, 'DELETE', '/_mock/faults')).status).toBe(204);
    expect((await upload()).status).toBe(200);
  });

  it('clears through the MockApi object too', async () => {
    mock.enqueueFault({ status: 500, times: 'always' });
    mock.clearFaults();
    expect((await upload()).status).toBe(200);
  });

  it('aims at another /v3 route when the fault names it, leaving uploads alone', async () => {
    await postFault({ status: 503, method: 'GET', path: '/v3/documents' });
    const uploaded = await upload();
    expect(uploaded.status).toBe(200);
    const id = asDocument(uploaded.json).meta.identifier;
    expect((await call(client, 'GET', `/v3/documents/${id}`, { headers: AUTH })).status).toBe(503);
    expect((await call(client, 'GET', `/v3/documents/${id}`, { headers: AUTH })).status).toBe(200);
  });

  it('never applies a fault to /_mock', async () => {
    await postFault({ status: 500, method: '*', path: '/v3', times: 'always' });
    expect((await call(client, 'GET', '/_mock/uploads')).status).toBe(200);
    expect(
      (await call(client, 'GET', '/_mock/credits', { headers: { 'x-mock-fault': 'status=503' } })).status,
    ).toBe(200);
    expect((await call(client, 'GET', '/v3/documents', { headers: AUTH })).status).toBe(500);
  });

  it.each([
    { name: 'two actions', fault: { status: 500, drop: 'before' } },
    { name: 'a drop that is neither before nor after', fault: { drop: 'later' } },
    { name: 'a path outside /v3', fault: { status: 500, path: '/_mock/uploads' } },
    { name: 'an unknown key', fault: { status: 500, when: 'now' } },
  ])('refuses $name with 400', async ({ fault }) => {
    const { status, json } = await postFault(fault);
    expect(status).toBe(400);
    expect(json).toMatchObject({ type: 'validation_error' });
  });
});
