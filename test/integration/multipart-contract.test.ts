import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import busboy from 'busboy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { everyUploadField } from '../../harness/test-config.ts';
import { createLogger } from '../../src/logger.ts';
import { createParsingApiClient, type ParsingApiClient } from '../../src/parsing-api/parsing-api-client.ts';
import { classifyResponse } from '../../src/uploader/classify-response.ts';
import { uploadFields, uploadQuery } from '../../src/uploader/upload-fields.ts';

/**
 * The contract with the parsing service, checked on the bytes: the exact request the
 * gateway's client sends is captured by a bare node:http server, parsed back with busboy (a
 * multipart parser this project did not write), and held against docs/parsing-api.md,
 * "Uploading a document". Nothing of the mock is involved, so the mock's leniency cannot hide
 * a mistake in the encoding; parsing-api-contract.test.ts holds the same calls against the
 * mock, and what the gateway reads back.
 */

const API_KEY = 'contract-key-7c1e4f';

/** The form fields of POST /v3/documents, as the service's description of the upload lists them. */
const SPEC_FIELDS = new Set([
  'file',
  'url',
  'collection',
  'documentType',
  'workspace',
  'wait',
  'identifier',
  'customIdentifier',
  'fileName',
  'expiryTime',
  'language',
  'rejectDuplicates',
  'regionBias',
  'lowPriority',
  'compact',
  'deleteAfterParse',
  'enableValidationTool',
  'useOcr',
  'llmHint',
  'limitToExamples',
  'warningMessages',
]);
const BOOLEAN_FIELDS = [
  'wait',
  'rejectDuplicates',
  'lowPriority',
  'compact',
  'deleteAfterParse',
  'enableValidationTool',
  'useOcr',
];

interface CapturedRequest {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

interface ParsedPart {
  name: string;
  value?: string;
  file?: { filename: string | undefined; mimeType: string; bytes: Buffer };
}

/** The parts of a captured multipart body, in order, as busboy reads them. */
function parseMultipart(request: CapturedRequest): Promise<ParsedPart[]> {
  return new Promise((resolve, reject) => {
    const parts: ParsedPart[] = [];
    const parser = busboy({ headers: request.headers, defParamCharset: 'utf8' });
    parser.on('field', (name, value) => parts.push({ name, value }));
    parser.on('file', (name, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () =>
        parts.push({
          name,
          file: { filename: info.filename, mimeType: info.mimeType, bytes: Buffer.concat(chunks) },
        }),
      );
    });
    parser.on('error', reject);
    parser.on('close', () => resolve(parts));
    parser.end(request.body);
  });
}

const PDF = Buffer.from('%PDF-1.4\n1 0 obj<</Type/Catalog>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n');

describe('the multipart request on the wire', () => {
  let server: Server;
  let client: ParsingApiClient;
  const captured: CapturedRequest[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        captured.push({
          method: req.method,
          url: req.url,
          headers: req.headers,
          body: Buffer.concat(chunks),
        });
        const body = JSON.stringify({
          extractor: 'invoice',
          meta: { identifier: 'Doc1', ready: true, ready_dt: '2025-03-01T10:00:00Z' },
          data: {},
        });
        res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no address');
    client = createParsingApiClient({
      baseUrl: `http://127.0.0.1:${address.port}`,
      apiKey: API_KEY,
      timeoutMs: 10_000,
      logger: createLogger({ level: 'silent' }),
    });
  });

  afterAll(async () => {
    await client?.close();
    server?.closeAllConnections();
    await new Promise<void>((resolve) => server?.close(() => resolve()));
  });

  it('matches the upload form of the service part by part', async () => {
    const receivedAt = new Date('2025-03-01T10:00:00.000Z');
    const result = await client.uploadDocument({
      file: PDF,
      fileName: 'Rechnung März 2025.pdf',
      contentType: 'application/pdf',
      fields: uploadFields(everyUploadField, {
        fileName: 'Rechnung März 2025.pdf',
        receivedAt,
        queueId: 'mq-contract',
        messageId: 'm@x',
        from: 'a@b.example',
        subject: 'S',
        attachmentIndex: 1,
        entry: 0,
      }),
      ...uploadQuery(everyUploadField),
    });
    // The snake_case answer is read (meta.identifier is the same word in both casings).
    expect(classifyResponse({ result, attempt: 1, maxAttempts: 3 })).toMatchObject({
      outcome: 'uploaded',
      documentIdentifier: 'Doc1',
    });

    const [request] = captured;
    expect(request?.method).toBe('POST');
    expect(request?.url).toBe('/v3/documents?snake_case=true');
    expect(request?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(request?.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    if (!request) return;

    const parts = await parseMultipart(request);
    const names = parts.map((part) => part.name);
    for (const name of names) expect(SPEC_FIELDS, `part ${name} is an upload field`).toContain(name);
    expect(names).not.toContain('identifier');
    expect(names).not.toContain('url');
    expect(names).not.toContain('snake_case');

    const values = (name: string) => parts.filter((part) => part.name === name).map((part) => part.value);
    for (const name of BOOLEAN_FIELDS) {
      expect(values(name), `${name} is one "true"/"false" part`).toHaveLength(1);
      expect(['true', 'false']).toContain(values(name)[0]);
    }
    expect(Object.fromEntries(BOOLEAN_FIELDS.map((name) => [name, values(name)[0]]))).toEqual({
      wait: 'true',
      rejectDuplicates: 'true',
      lowPriority: 'false',
      compact: 'true',
      deleteAfterParse: 'true',
      enableValidationTool: 'false',
      useOcr: 'false',
    });
    expect(values('workspace')).toEqual(['ws-contract']);
    expect(values('collection')).toEqual(['col-1']);
    expect(values('documentType')).toEqual(['doc-type-1']);
    expect(values('customIdentifier')).toEqual(['mq-contract-1']);
    expect(values('expiryTime')).toEqual(['2025-03-01T22:00:00.000Z']);
    expect(values('language')).toEqual(['de']);
    expect(values('llmHint')).toEqual(['Amounts in EUR; dates are DD.MM.YYYY']);
    expect(values('regionBias')).toHaveLength(1);
    expect(JSON.parse(values('regionBias')[0] ?? '')).toEqual({
      country: 'vn',
      countries: ['vn', 'la'],
      squareCoordinates: [1.5, 2, 3, 4.25],
      strict: false,
    });
    expect(values('limitToExamples')).toEqual(['ex-a', 'ex-b', 'ex-c']);
    expect(values('warningMessages').map((text) => JSON.parse(text ?? ''))).toEqual([
      { warningCode: 'check_total', warningDetail: 'Totals differ' },
    ]);

    // The name on the file part and as its own field (docs/parsing-api.md), the bytes and the type.
    expect(values('fileName')).toEqual(['Rechnung März 2025.pdf']);
    const files = parts.filter((part) => part.file !== undefined);
    expect(files).toHaveLength(1);
    expect(files[0]?.name).toBe('file');
    expect(files[0]?.file?.filename).toBe('Rechnung März 2025.pdf');
    expect(files[0]?.file?.mimeType).toBe('application/pdf');
    expect(files[0]?.file?.bytes.equals(PDF)).toBe(true);
  });

  it('polls with the same key, and the snake_case query when asked', async () => {
    const before = captured.length;
    await client.getDocument('Doc 1/2', { snakeCase: true });
    await client.getDocument('Doc1');
    const [snake, plain] = captured.slice(before);
    expect(snake).toMatchObject({ method: 'GET', url: '/v3/documents/Doc%201%2F2?snake_case=true' });
    expect(snake?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(plain).toMatchObject({ method: 'GET', url: '/v3/documents/Doc1' });
  });
});
