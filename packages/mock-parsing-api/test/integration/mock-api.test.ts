import { createHash } from 'node:crypto';
import { Client, FormData } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMockApi, type MockApi } from '../../src/mock-parsing-api.ts';

const API_KEY = 'mock-test-key';
const AUTH = { authorization: `Bearer ${API_KEY}` };

/** A minimal PDF: file-type needs only the header, the parser would need the rest. */
const PDF = Buffer.from(
  '%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\n' +
    'trailer<</Root 1 0 R>>\n%%EOF\n',
);
/** A 1×1 transparent PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);
/** A ZIP with no entries: a type file-type knows and the service does not take. */
const ZIP = Buffer.from('504b0506000000000000000000000000000000000000', 'hex');

type Fields = ReadonlyArray<readonly [string, string]>;

function form(file: { bytes: Buffer; name: string; type: string } | null, fields: Fields = []): FormData {
  const body = new FormData();
  for (const [name, value] of fields) body.append(name, value);
  if (file) body.append('file', new File([file.bytes], file.name, { type: file.type }));
  return body;
}

const pdf = { bytes: PDF, name: 'invoice.pdf', type: 'application/pdf' };

let mock: MockApi;
let client: Client;

async function call(method: 'GET' | 'POST', path: string, body?: FormData | string, headers = {}) {
  const response = await client.request({ method, path, body: body ?? null, headers });
  const text = await response.body.text();
  const json: unknown =
    response.headers['content-type'] === 'application/json' ? JSON.parse(text) : undefined;
  return { status: response.statusCode, headers: response.headers, text, json };
}

/** The parts of a Document or RequestError the tests look at. */
interface Reply {
  meta: Record<string, unknown>;
  data: unknown;
  error?: { errorCode: string };
  errors: Array<{ attr: string | null; code: string; detail: string }>;
  type: string;
  results: Array<{ meta: { identifier: string } }>;
  count: number;
  uploads: Array<Record<string, unknown>>;
}
const reply = (json: unknown) => json as Reply;

beforeEach(async () => {
  mock = createMockApi({
    apiKey: API_KEY,
    maxFileBytes: 64 * 1024,
  });
  const { url } = await mock.start({ host: '127.0.0.1', port: 0 });
  client = new Client(url);
});

afterEach(async () => {
  await client.close();
  await mock.close();
});

describe('POST /v3/documents', () => {
  it('answers wait=true (the default) with 200 and a ready Document, and records the upload', async () => {
    const uploaded = mock.waitForUploads(1);
    const { status, json } = await call(
      'POST',
      '/v3/documents',
      form(pdf, [
        ['workspace', 'WS1'],
        ['collection', 'COL1'],
        ['customIdentifier', 'msg-1/0'],
        ['limitToExamples', 'a'],
        ['limitToExamples', 'b'],
      ]),
      AUTH,
    );
    expect(status).toBe(200);
    const { meta, data } = reply(json);
    expect(data).toEqual({});
    expect(meta).toMatchObject({
      fileName: 'invoice.pdf',
      ready: true,
      failed: false,
      customIdentifier: 'msg-1/0',
      workspace: { identifier: 'WS1' },
      collection: { identifier: 'COL1' },
    });
    expect(typeof meta.readyDt).toBe('string');
    const [upload] = await uploaded;
    expect(upload).toMatchObject({
      documentIdentifier: meta.identifier,
      authorization: `Bearer ${API_KEY}`,
      fields: { workspace: ['WS1'], limitToExamples: ['a', 'b'] },
      file: {
        fileName: 'invoice.pdf',
        contentType: 'application/pdf',
        size: PDF.length,
        sha256: createHash('sha256').update(PDF).digest('hex'),
      },
    });
    expect(upload?.file?.bytes?.equals(PDF)).toBe(true);
    expect(mock.documents.get(String(meta.identifier))?.meta.fileName).toBe('invoice.pdf');
  });

  it('answers wait=false with 201, empty data and ready false; a later GET sees it finished', async () => {
    const png = { bytes: PNG, name: 'scan.png', type: 'image/png' };
    const created = await call('POST', '/v3/documents', form(png, [['wait', 'false']]), AUTH);
    expect(created.status).toBe(201);
    const { meta, data } = reply(created.json);
    expect(data).toEqual({});
    expect(meta).toMatchObject({ ready: false, readyDt: null, failed: false });

    const read = await call('GET', `/v3/documents/${String(meta.identifier)}`, undefined, AUTH);
    expect(read.status).toBe(200);
    expect(reply(read.json).meta).toMatchObject({
      identifier: meta.identifier,
      ready: true,
      fileName: 'scan.png',
    });
  });

  it('prefers the fileName field to the part filename', async () => {
    const { json } = await call(
      'POST',
      '/v3/documents',
      form(pdf, [['fileName', 'Rechnung März.pdf']]),
      AUTH,
    );
    expect(reply(json).meta.fileName).toBe('Rechnung März.pdf');
  });

  it('answers in snake_case when asked, recursively', async () => {
    const { status, text } = await call(
      'POST',
      '/v3/documents?snake_case=true',
      form(pdf, [['customIdentifier', 'c-1']]),
      AUTH,
    );
    expect(status).toBe(200);
    const body = JSON.parse(text) as { meta: Record<string, unknown> };
    expect(body.meta).toMatchObject({
      file_name: 'invoice.pdf',
      custom_identifier: 'c-1',
      is_archived: false,
    });
    expect(typeof body.meta.ready_dt).toBe('string');
    expect(text).not.toMatch(/"[a-z]+[A-Z][A-Za-z]*":/);
  });

  it('accepts a text file by its declared type', async () => {
    const txt = { bytes: Buffer.from('plain words\n'), name: 'note.txt', type: 'text/plain' };
    expect((await call('POST', '/v3/documents', form(txt), AUTH)).status).toBe(200);
  });

  it.each([
    {
      name: 'a ZIP declared as PDF',
      file: { bytes: ZIP, name: 'x.pdf', type: 'application/pdf' },
      code: 'invalid',
    },
    {
      name: 'unknown bytes',
      file: { bytes: Buffer.from([0, 1, 2, 3, 4, 5, 6, 7]), name: 'x.bin', type: 'application/octet-stream' },
      code: 'invalid',
    },
    {
      name: 'an empty file',
      file: { bytes: Buffer.alloc(0), name: 'x.pdf', type: 'application/pdf' },
      code: 'empty',
    },
  ])('refuses $name with 400 validation_error on attr file', async ({ file, code }) => {
    const { status, json } = await call('POST', '/v3/documents', form(file), AUTH);
    expect(status).toBe(400);
    expect(reply(json).type).toBe('validation_error');
    expect(reply(json).errors).toEqual([expect.objectContaining({ attr: 'file', code })]);
    expect(mock.uploads).toHaveLength(0);
  });

  it.each([
    { name: 'neither file nor url', body: form(null, [['workspace', 'W']]), attr: null },
    { name: 'a wait that is not a boolean', body: form(pdf, [['wait', 'maybe']]), attr: 'wait' },
    {
      name: 'deleteAfterParse with wait=false',
      body: form(pdf, [
        ['wait', 'false'],
        ['deleteAfterParse', 'true'],
      ]),
      attr: null,
    },
    { name: 'a bad url', body: form(null, [['url', 'ftp://x/y.pdf']]), attr: 'url' },
  ])('refuses $name with 400', async ({ body, attr }) => {
    const { status, json } = await call('POST', '/v3/documents', body, AUTH);
    expect(status).toBe(400);
    expect(reply(json).errors[0]?.attr).toBe(attr);
  });

  it('takes an upload by url and records it without a file', async () => {
    const { status, json } = await call(
      'POST',
      '/v3/documents',
      form(null, [['url', 'https://x.test/a/b.pdf']]),
      AUTH,
    );
    expect(status).toBe(200);
    expect(reply(json).meta.fileName).toBe('b.pdf');
    expect(mock.uploads[0]?.file).toBeNull();
  });

  it('answers 413 with a RequestError for a file over the limit, after reading the whole request', async () => {
    const big = {
      bytes: Buffer.concat([PDF, Buffer.alloc(100 * 1024)]),
      name: 'big.pdf',
      type: 'application/pdf',
    };
    const { status, json } = await call('POST', '/v3/documents', form(big), AUTH);
    expect(status).toBe(413);
    expect(reply(json).errors[0]).toMatchObject({ attr: 'file', code: 'file_too_large' });
  });

  it.each([
    { name: 'no Authorization', headers: {}, code: 'not_authenticated' },
    { name: 'a wrong key', headers: { authorization: 'Bearer nope' }, code: 'authentication_failed' },
    { name: 'another scheme', headers: { authorization: `Basic ${API_KEY}` }, code: 'authentication_failed' },
  ])('answers $name with 401', async ({ headers, code }) => {
    const { status, json } = await call('POST', '/v3/documents', form(pdf), headers);
    expect(status).toBe(401);
    expect(reply(json)).toMatchObject({ type: 'client_error', errors: [{ attr: null, code }] });
  });

  it('answers a non-multipart body with 415', async () => {
    const { status } = await call('POST', '/v3/documents', '{"url":"https://x"}', {
      ...AUTH,
      'content-type': 'application/json',
    });
    expect(status).toBe(415);
  });

  it('answers malformed multipart with 400 and keeps serving', async () => {
    const broken = await call(
      'POST',
      '/v3/documents',
      '--b\r\nContent-Disposition: form-data; name="x"\r\n\r\nunfinished',
      {
        ...AUTH,
        'content-type': 'multipart/form-data; boundary=b',
      },
    );
    expect(broken.status).toBe(400);
    expect(reply(broken.json).errors[0]?.code).toBe('parse_error');
    const noBoundary = await call('POST', '/v3/documents', 'x', {
      ...AUTH,
      'content-type': 'multipart/form-data',
    });
    expect(noBoundary.status).toBe(400);
    expect((await call('POST', '/v3/documents', form(pdf), AUTH)).status).toBe(200);
  });

  it('rejects a duplicate inside a 200 Document when rejectDuplicates is true', async () => {
    const fields: Fields = [
      ['workspace', 'W'],
      ['rejectDuplicates', 'true'],
    ];
    const first = await call('POST', '/v3/documents', form(pdf, fields), AUTH);
    const second = await call('POST', '/v3/documents', form(pdf, fields), AUTH);
    expect(reply(first.json).error).toBeUndefined();
    expect(second.status).toBe(200);
    expect(reply(second.json).error?.errorCode).toBe('duplicate_document');
    expect(reply(second.json).meta).toMatchObject({ failed: true, errorCode: 'duplicate_document' });
  });
});

describe('reading documents', () => {
  it('GET /v3/documents/{id} answers the Document, in snake_case when asked', async () => {
    const { json } = await call('POST', '/v3/documents', form(pdf), AUTH);
    const id = String(reply(json).meta.identifier);
    const read = await call('GET', `/v3/documents/${id}`, undefined, AUTH);
    expect(read.json).toEqual(json);
    const snake = await call('GET', `/v3/documents/${id}?snake_case=true`, undefined, AUTH);
    expect(reply(snake.json).meta.file_name).toBe('invoice.pdf');
  });

  it('answers an unknown document with 404 RequestError', async () => {
    const { status, json } = await call('GET', '/v3/documents/nothing', undefined, AUTH);
    expect(status).toBe(404);
    expect(reply(json)).toEqual({
      type: 'client_error',
      errors: [{ attr: null, code: 'not_found', detail: 'Not found.' }],
    });
  });

  it('needs the key to read', async () => {
    expect((await call('GET', '/v3/documents/x', undefined, {})).status).toBe(401);
  });

  it('lists by custom_identifier', async () => {
    await call('POST', '/v3/documents', form(pdf, [['customIdentifier', 'mine']]), AUTH);
    await call('POST', '/v3/documents', form(pdf, [['customIdentifier', 'other']]), AUTH);
    const { status, json } = await call('GET', '/v3/documents?custom_identifier=mine', undefined, AUTH);
    expect(status).toBe(200);
    expect(reply(json).count).toBe(1);
    expect(reply(json).results[0]?.meta).toMatchObject({ customIdentifier: 'mine' });
  });

  it.each([
    { method: 'GET' as const, path: '/v2/documents', status: 404 },
    { method: 'POST' as const, path: '/v3/documents/abc', status: 405 },
    { method: 'GET' as const, path: '/v3/documents/%E0%A4%A', status: 404 },
  ])('answers $method $path with $status', async ({ method, path, status }) => {
    expect((await call(method, path, undefined, AUTH)).status).toBe(status);
  });
});

describe('faults', () => {
  it('serves faults posted to /_mock/faults in order, then answers normally', async () => {
    const posted = await call('POST', '/_mock/faults', '{"status":503,"headers":{"retry-after":"7"}}');
    expect(posted.status).toBe(204);
    const faulted = await call('POST', '/v3/documents', form(pdf), AUTH);
    expect(faulted.status).toBe(503);
    expect(faulted.headers['retry-after']).toBe('7');
    expect(reply(faulted.json).type).toBe('server_error');
    expect((await call('POST', '/v3/documents', form(pdf), AUTH)).status).toBe(200);
    expect(mock.uploads).toHaveLength(1);
  });

  it('refuses a malformed fault', async () => {
    expect((await call('POST', '/_mock/faults', '{"status":"soon"}')).status).toBe(400);
    expect((await call('POST', '/_mock/faults', 'not json')).status).toBe(400);
  });

  it('drops the connection for a drop fault', async () => {
    mock.enqueueFault({ drop: true });
    // undici's socket error, or the system's when the close lands while the body is written.
    await expect(call('POST', '/v3/documents', form(pdf), AUTH)).rejects.toMatchObject({
      code: expect.stringMatching(/^(UND_ERR_SOCKET|EPIPE|ECONNRESET)$/),
    });
  });

  it('lists uploads over HTTP without bytes and without the key', async () => {
    await call('POST', '/v3/documents', form(pdf, [['workspace', 'W']]), AUTH);
    const { json, text } = await call('GET', '/_mock/uploads');
    const [upload] = reply(json).uploads;
    expect(upload).toMatchObject({
      authorization: 'Bearer [redacted]',
      fields: { workspace: ['W'] },
      file: {
        fileName: 'invoice.pdf',
        size: PDF.length,
        sha256: createHash('sha256').update(PDF).digest('hex'),
      },
    });
    expect(text).not.toContain(API_KEY);
    expect(text).not.toContain('bytes');
  });

  it('rejects a pending waitForUploads when closed', async () => {
    const waiting = mock.waitForUploads(1);
    await mock.close();
    await expect(waiting).rejects.toThrow(/closed/);
  });
});
