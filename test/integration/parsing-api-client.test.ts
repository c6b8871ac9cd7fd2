import { createServer, type Server } from 'node:http';
import { createMockApi, type MockApi } from '@ingest-gateway/mock-parsing-api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger, type Logger } from '../../src/logger.ts';
import { MAX_LIST_PAGES } from '../../src/parsing-api/document-list.ts';
import { createParsingApiClient, type ParsingApiClient } from '../../src/parsing-api/parsing-api-client.ts';
import { classifyResponse } from '../../src/uploader/classify-response.ts';
import { findEarlierUpload } from '../../src/uploader/find-earlier-upload.ts';

/**
 * The client's own behaviour against the mock: the fields it adds, the faults and failures it
 * reports, how far it follows a listing, that the key never reaches a log line. What each call
 * sends and reads back when all goes well is the contract, parsing-api-contract.test.ts.
 */

const API_KEY = 'client-test-key-0123456789';

/** A minimal PDF: file-type needs only the header. */
const PDF = Buffer.from('%PDF-1.4\n1 0 obj<</Type/Catalog>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n');

/** Every log line, so a test can check the key never appears in one. */
function memoryLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  return {
    logger: createLogger({ level: 'debug', destination: { write: (line: string) => lines.push(line) } }),
    lines,
  };
}

const upload = (fileName = 'invoice.pdf', fields: ReadonlyArray<readonly [string, string]> = []) => ({
  file: PDF,
  fileName,
  contentType: 'application/pdf',
  fields,
});

let mock: MockApi;
let baseUrl: string;
let log: { logger: Logger; lines: string[] };
let client: ParsingApiClient;
const classify = (result: Awaited<ReturnType<ParsingApiClient['uploadDocument']>>) =>
  classifyResponse({ result, attempt: 1, maxAttempts: 3 });

beforeEach(async () => {
  log = memoryLogger();
  mock = createMockApi({ apiKey: API_KEY, logger: log.logger });
  baseUrl = (await mock.start({ host: '127.0.0.1', port: 0 })).url;
  client = createParsingApiClient({ baseUrl, apiKey: API_KEY, timeoutMs: 10_000, logger: log.logger });
});

afterEach(async () => {
  await client.close();
  await mock.close();
  expect(log.lines.join('\n')).not.toContain(API_KEY);
});

describe('uploadDocument against the mock', () => {
  it('adds the name as a fileName field of its own when the caller gave none', async () => {
    await client.uploadDocument(upload('Rechnung März.pdf', [['workspace', 'WS1']]));
    const [received] = await mock.waitForUploads(1);
    expect(received?.fields).toEqual({ workspace: ['WS1'], fileName: ['Rechnung März.pdf'] });
    expect(received?.file?.fileName).toBe('Rechnung März.pdf');
  });

  it('keeps a fileName field the caller gave instead of adding one', async () => {
    await client.uploadDocument(upload('part.pdf', [['fileName', 'field.pdf']]));
    const [received] = await mock.waitForUploads(1);
    expect(received?.fields.fileName).toEqual(['field.pdf']);
    expect(received?.file?.fileName).toBe('part.pdf');
  });

  it('gets the 401, not a broken pipe, when the key is refused while a large file is still being sent', async () => {
    const wrong = createParsingApiClient({
      baseUrl,
      apiKey: 'wrong-key',
      timeoutMs: 10_000,
      logger: log.logger,
    });
    try {
      const large = Buffer.concat([PDF, Buffer.alloc(8 * 1024 * 1024)]);
      const result = await wrong.uploadDocument({ ...upload(), file: large });
      expect(result).toMatchObject({ kind: 'response', status: 401 });
    } finally {
      await wrong.close();
    }
  });

  it('reports an enqueued 503 with Retry-After as retry, then uploads', async () => {
    mock.enqueueFault({ status: 503, headers: { 'retry-after': '12' } });
    expect(classify(await client.uploadDocument(upload()))).toEqual({
      outcome: 'retry',
      reason: 'HTTP 503 Service Unavailable: error: A server error occurred (mock fault 503).',
      retryAfter: '12',
    });
    expect(classify(await client.uploadDocument(upload()))).toMatchObject({ outcome: 'uploaded' });
  });

  it('reports a dropped connection as a network result, classified retry', async () => {
    mock.enqueueFault({ drop: true });
    const result = await client.uploadDocument(upload());
    expect(result.kind).toBe('network');
    expect(classify(result)).toMatchObject({
      outcome: 'retry',
      reason: expect.stringMatching(/^network error/),
    });
  });

  it('reports invalid JSON as a body error, and never reads more than the limit', async () => {
    const small = createParsingApiClient({
      baseUrl,
      apiKey: API_KEY,
      timeoutMs: 10_000,
      logger: log.logger,
      maxResponseBytes: 1024,
    });
    try {
      mock.enqueueFault({ status: 200, body: '{"meta":', headers: { 'content-type': 'application/json' } });
      expect(await small.uploadDocument(upload())).toMatchObject({
        bodyError: expect.stringMatching(/invalid JSON/),
      });
      mock.enqueueFault({
        status: 200,
        body: { meta: { identifier: 'x' }, data: { text: 'y'.repeat(4096) } },
      });
      const result = await small.uploadDocument(upload());
      expect(result).toMatchObject({ kind: 'response', status: 200, body: undefined });
      expect(classify(result)).toMatchObject({ outcome: 'failed', detail: expect.stringMatching(/larger/) });
    } finally {
      await small.close();
    }
  });
});

describe('findDocuments', () => {
  const tagged = (label: string, customIdentifier: string) =>
    client.uploadDocument(
      upload(`${label}.pdf`, [
        ['customIdentifier', customIdentifier],
        ['workspace', 'ws-1'],
      ]),
    );
  it(`stops after ${MAX_LIST_PAGES} pages, and the lookup then has no answer to rely on`, async () => {
    for (let i = 0; i < MAX_LIST_PAGES + 2; i++) await tagged(`many-${i}`, 'many');
    mock.setDocumentList({ pageSize: 1 });
    const listing = await client.findDocuments('many');
    expect(listing.followed).toHaveLength(MAX_LIST_PAGES - 1);
    expect(listing.last).toMatchObject({ status: 200, body: { next: expect.stringContaining('page=') } });
    expect(findEarlierUpload(listing, 'absent', 'ws-1')).toEqual({
      unknown: `document lookup read ${MAX_LIST_PAGES} pages and more remain`,
    });
  });

  it('ends the listing at a failed page', async () => {
    await tagged('x', 'failing');
    await tagged('y', 'failing');
    mock.setDocumentList({ pageSize: 1 });
    mock.enqueueFault({ status: 503, retryAfter: 3, method: 'GET', path: '/v3/documents' });
    expect(await client.findDocuments('failing')).toEqual({
      followed: [],
      last: expect.objectContaining({
        status: 503,
        headers: expect.objectContaining({ 'retry-after': '3' }),
      }),
    });
  });
});

describe('a list whose next page is elsewhere', () => {
  let lister: Server;
  const seen: string[] = [];

  beforeEach(async () => {
    lister = createServer((req, res) => {
      seen.push(`${req.url} ${req.headers.authorization === `Bearer ${API_KEY}` ? 'key' : 'no key'}`);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ count: 2, next: 'http://127.0.0.2:1/v3/documents?page=2', results: [] }));
    });
    await new Promise<void>((resolve) => lister.listen(0, '127.0.0.1', resolve));
  });

  afterEach(async () => {
    lister.closeAllConnections();
    await new Promise<void>((resolve) => lister.close(() => resolve()));
  });

  it('is not fetched: the key goes to the configured origin only', async () => {
    const address = lister.address();
    if (address === null || typeof address === 'string') throw new Error('no address');
    const other = createParsingApiClient({
      baseUrl: `http://127.0.0.1:${address.port}`,
      apiKey: API_KEY,
      timeoutMs: 2000,
      logger: log.logger,
    });
    try {
      const listing = await other.findDocuments('q-1');
      expect(seen).toEqual(['/v3/documents?custom_identifier=q-1 key']);
      expect(listing.followed).toEqual([]);
      expect(findEarlierUpload(listing, 'q-1', 'ws-1')).toEqual({
        unknown: 'document lookup read 1 pages and more remain',
      });
    } finally {
      await other.close();
    }
  });
});

describe('a server that never answers', () => {
  let silent: Server;

  beforeEach(async () => {
    silent = createServer(() => {
      // Holds every request open: the client's timeout is what ends it.
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  });

  afterEach(async () => {
    silent.closeAllConnections();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });

  it('reports a timeout as a network result with code TIMEOUT', async () => {
    const address = silent.address();
    if (address === null || typeof address === 'string') throw new Error('no address');
    const slow = createParsingApiClient({
      baseUrl: `http://127.0.0.1:${address.port}`,
      apiKey: API_KEY,
      timeoutMs: 200,
      logger: log.logger,
    });
    try {
      const result = await slow.uploadDocument(upload());
      expect(result).toMatchObject({ kind: 'network', error: { code: 'TIMEOUT' } });
      expect(classify(result)).toMatchObject({
        outcome: 'retry',
        reason: expect.stringMatching(/^timed out/),
      });
    } finally {
      await slow.close();
    }
  });
});

describe('creation', () => {
  it.each(['http://api.example.com', 'http://10.1.2.3:8080', 'http://[::2]', 'http://127.0.0.1.example.com'])(
    'refuses plain http to %s without naming the key',
    (url) => {
      const create = () =>
        createParsingApiClient({ baseUrl: url, apiKey: API_KEY, timeoutMs: 1_000, logger: log.logger });
      expect(create).toThrow(/plain http/);
      expect(create).not.toThrow(new RegExp(API_KEY));
    },
  );

  it('refuses an unusable key without echoing it', () => {
    const key = 'has space';
    const create = () =>
      createParsingApiClient({ baseUrl, apiKey: key, timeoutMs: 1_000, logger: log.logger });
    expect(create).toThrow(/apiKey/);
    expect(create).not.toThrow(/has space/);
  });

  it('closes idempotently', async () => {
    const extra = createParsingApiClient({ baseUrl, apiKey: API_KEY, timeoutMs: 1_000, logger: log.logger });
    await Promise.all([extra.close(), extra.close()]);
    await extra.close();
  });
});
