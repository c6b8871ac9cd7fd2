import { Client } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMockApi, type MockApi } from '../../src/mock-parsing-api.ts';
import { pdfWithPages } from '../../src/sample-pdf.ts';
import { asDocument, call, type UploadFile, uploadForm } from '../support/mock-api-requests.ts';
import { sampleFile } from '../support/sample-files.ts';

/** How the mock processes an upload: state flags, rejections, warnings, failures, credits. */

const API_KEY = 'processing-test-key';
const AUTH = { authorization: `Bearer ${API_KEY}` };
const ZIP = sampleFile('archive.zip');
const docx = sampleFile('sample.docx');

const pdf = (label: string, pages = 1, endMarker = true): UploadFile => ({
  bytes: pdfWithPages(pages, { label, endMarker }),
  name: `${label}.pdf`,
  type: 'application/pdf',
});
const zip: UploadFile = { bytes: ZIP, name: 'archive.zip', type: 'application/zip' };

let mock: MockApi;
let client: Client;

beforeEach(async () => {
  mock = createMockApi({
    apiKey: API_KEY,
    workspaces: [
      { identifier: 'ws-strict', rejectDuplicates: true, rejectInvalidDocuments: true },
      { identifier: 'ws-lenient' },
      { identifier: 'ws-split', documentSplitter: { identifier: 'split-pages', name: 'Pages' } },
    ],
  });
  const { url } = await mock.start({ host: '127.0.0.1', port: 0 });
  client = new Client(url);
});

afterEach(async () => {
  await client.close();
  await mock.close();
});

type Fields = ReadonlyArray<readonly [string, string]>;
const upload = (file: UploadFile | null, fields: Fields = [], query = '') =>
  call(client, 'POST', `/v3/documents${query}`, { body: uploadForm(file, fields), headers: AUTH });
const read = (identifier: string, query = '') =>
  call(client, 'GET', `/v3/documents/${identifier}${query}`, { headers: AUTH });
const credits = async () => (await call(client, 'GET', '/_mock/credits')).json;

describe('document state', () => {
  it('answers wait=true with the finished document and every state flag', async () => {
    const { status, json } = await upload(pdf('flags'), [['workspace', 'ws-lenient']]);
    expect(status).toBe(200);
    const document = asDocument(json);
    expect(document).toMatchObject({ data: {}, warnings: [] });
    expect(document.error).toBeUndefined();
    expect(document.meta).toMatchObject({
      ready: true,
      failed: false,
      isConfirmed: false,
      isRejected: false,
      isArchived: false,
      errorCode: null,
      errorDetail: null,
      workspace: { identifier: 'ws-lenient' },
    });
    expect(Date.parse(String(document.meta.readyDt))).not.toBeNaN();
  });

  it('answers wait=false with the pending document; a later GET shows warnings it did not', async () => {
    const created = await upload(pdf('long', 11), [['wait', 'false']]);
    expect(created.status).toBe(201);
    const pending = asDocument(created.json);
    expect(pending).toMatchObject({ data: {}, warnings: [] });
    expect(pending.meta).toMatchObject({ ready: false, readyDt: null, failed: false });

    const final = asDocument((await read(pending.meta.identifier)).json);
    expect(final.meta).toMatchObject({ identifier: pending.meta.identifier, ready: true, failed: false });
    expect(final.warnings).toEqual([
      {
        warningCode: 'too_many_pages',
        warningDetail: 'The document has 11 pages; only the first 10 were parsed.',
      },
    ]);
  });

  it('answers wait=false for a broken file as pending, and a later GET shows it failed', async () => {
    const created = await upload(pdf('cut', 1, false), [['wait', 'false']]);
    expect(created.status).toBe(201);
    const pending = asDocument(created.json);
    expect(pending.meta).toMatchObject({ ready: false, failed: false, errorCode: null });
    expect(pending.error).toBeUndefined();

    const final = asDocument((await read(pending.meta.identifier)).json);
    expect(final.meta).toMatchObject({ ready: true, failed: true, errorCode: 'document_conversion_failed' });
    expect(final.error?.errorCode).toBe('document_conversion_failed');
    expect(final.meta.errorDetail).toBe(final.error?.errorDetail);
  });
});

describe('documentSplitter', () => {
  it('splits a multi-page PDF into a child document per page, each parsed on its own', async () => {
    const { status, json } = await upload(pdf('bundle', 3), [['workspace', 'ws-split']]);
    expect(status).toBe(200);
    const parent = asDocument(json);
    const children = parent.meta.childDocuments as { identifier: string; customIdentifier: null }[];
    expect(children).toHaveLength(3);
    expect(parent.meta).toMatchObject({ ready: true, failed: false, parentDocument: null });
    for (const [index, reference] of children.entries()) {
      const child = asDocument((await read(reference.identifier)).json);
      expect(child.meta).toMatchObject({
        ready: true,
        failed: false,
        fileName: `bundle-page-${index + 1}.pdf`,
        workspace: { identifier: 'ws-split' },
        parentDocument: { identifier: parent.meta.identifier, customIdentifier: null },
        childDocuments: [],
      });
    }
  });

  it('leaves a one-page PDF and a workspace without a splitter whole', async () => {
    const single = asDocument((await upload(pdf('single', 1), [['workspace', 'ws-split']])).json);
    expect(single.meta.childDocuments).toEqual([]);
    const unsplit = asDocument((await upload(pdf('unsplit', 3), [['workspace', 'ws-lenient']])).json);
    expect(unsplit.meta.childDocuments).toEqual([]);
  });
});

describe('rejectDuplicates', () => {
  it('rejects the same bytes again when the upload asks, with no credit', async () => {
    const file = pdf('twice');
    const fields: Fields = [
      ['workspace', 'ws-lenient'],
      ['rejectDuplicates', 'true'],
    ];
    const first = asDocument((await upload(file, fields)).json);
    const second = await upload(file, fields);
    expect(second.status).toBe(200);
    expect(asDocument(second.json).meta).toMatchObject({
      ready: true,
      failed: true,
      errorCode: 'duplicate_document',
    });
    expect(asDocument(second.json).error?.errorDetail).toContain(first.meta.identifier);
    expect(mock.creditsUsed).toBe(1);
  });

  it('takes the workspace setting when the upload gives none', async () => {
    const file = pdf('workspace-default');
    await upload(file, [['workspace', 'ws-strict']]);
    const again = asDocument((await upload(file, [['workspace', 'ws-strict']])).json);
    expect(again.error?.errorCode).toBe('duplicate_document');
  });

  it('lets the upload field override the workspace setting', async () => {
    const file = pdf('override');
    await upload(file, [['workspace', 'ws-strict']]);
    const again = asDocument(
      (
        await upload(file, [
          ['workspace', 'ws-strict'],
          ['rejectDuplicates', 'false'],
        ])
      ).json,
    );
    expect(again.meta.failed).toBe(false);
    expect(again.error).toBeUndefined();
  });

  it('parses the same bytes again in a workspace that does not reject duplicates', async () => {
    const file = pdf('lenient');
    await upload(file, [['workspace', 'ws-lenient']]);
    const again = asDocument((await upload(file, [['workspace', 'ws-lenient']])).json);
    expect(again.meta.failed).toBe(false);
    expect(mock.creditsUsed).toBe(2);
  });

  it('compares within one workspace only', async () => {
    const file = pdf('elsewhere');
    await upload(file, [['workspace', 'ws-lenient']]);
    const other = asDocument((await upload(file, [['workspace', 'ws-strict']])).json);
    expect(other.meta.failed).toBe(false);
  });
});

describe('rejectInvalidDocuments', () => {
  it('turns an unsupported file into a rejected document in a workspace that rejects them', async () => {
    const { status, json } = await upload(zip, [['workspace', 'ws-strict']]);
    expect(status).toBe(200);
    const document = asDocument(json);
    expect(document.meta).toMatchObject({ ready: true, failed: true, errorCode: 'invalid_document_type' });
    expect(document.error?.errorDetail).toMatch(/Unsupported file type/);
    expect(mock.uploads).toHaveLength(1);
    expect(await credits()).toEqual({ used: 0 });
  });

  it.each([
    { name: 'a workspace that does not reject them', fields: [['workspace', 'ws-lenient']] as Fields },
    { name: 'a workspace the mock does not know', fields: [['workspace', 'ws-unknown']] as Fields },
    { name: 'no workspace', fields: [] as Fields },
  ])('answers 400 in $name, and records nothing', async ({ fields }) => {
    const { status, json } = await upload(zip, fields);
    expect(status).toBe(400);
    expect(json).toMatchObject({ type: 'validation_error', errors: [{ attr: 'file', code: 'invalid' }] });
    expect(mock.uploads).toHaveLength(0);
  });

  it('follows the workspace setting as PATCH changes it', async () => {
    expect((await upload(zip, [['workspace', 'ws-lenient']])).status).toBe(400);
    const patched = await call(client, 'PATCH', '/v3/workspaces/ws-lenient', {
      body: JSON.stringify({ rejectInvalidDocuments: true }),
      headers: { ...AUTH, 'content-type': 'application/json' },
    });
    expect(patched.status).toBe(200);
    const after = await upload(zip, [['workspace', 'ws-lenient']]);
    expect(after.status).toBe(200);
    expect(asDocument(after.json).error?.errorCode).toBe('invalid_document_type');
  });
});

describe('warnings and conversion failures', () => {
  it.each([
    { pages: 10, warnings: [] },
    { pages: 11, warnings: ['too_many_pages'] },
    { pages: 40, warnings: ['too_many_pages'] },
  ])('a PDF of $pages pages has warnings $warnings', async ({ pages, warnings }) => {
    const document = asDocument((await upload(pdf(`pages-${pages}`, pages))).json);
    expect(document.meta.failed).toBe(false);
    expect(document.warnings.map((warning) => warning.warningCode)).toEqual(warnings);
  });

  it.each([
    { name: 'a PDF without %%EOF', file: pdf('no-eof', 2, false) },
    {
      name: 'a DOCX whose zip is cut short',
      file: {
        bytes: docx.subarray(0, docx.length - 40),
        name: 'cut.docx',
        type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      },
    },
  ])('fails $name with document_conversion_failed, and it costs a credit', async ({ file }) => {
    const { status, json } = await upload(file);
    expect(status).toBe(200);
    const document = asDocument(json);
    expect(document.error?.errorCode).toBe('document_conversion_failed');
    expect(document.meta).toMatchObject({
      failed: true,
      ready: true,
      errorCode: 'document_conversion_failed',
    });
    expect(mock.creditsUsed).toBe(1);
  });

  it('parses the whole DOCX sample', async () => {
    const file = { bytes: docx, name: 'whole.docx', type: 'application/octet-stream' };
    expect(asDocument((await upload(file)).json).meta.failed).toBe(false);
  });
});

describe('deleteAfterParse', () => {
  it('is refused with wait=false', async () => {
    const { status, json } = await upload(pdf('dap'), [
      ['wait', 'false'],
      ['deleteAfterParse', 'true'],
    ]);
    expect(status).toBe(400);
    expect(json).toMatchObject({ type: 'validation_error', errors: [{ attr: null, code: 'invalid' }] });
  });

  it('with wait=true answers the parsed document and keeps nothing to read', async () => {
    const { status, json } = await upload(pdf('dap-wait'), [['deleteAfterParse', 'true']]);
    expect(status).toBe(200);
    const document = asDocument(json);
    expect(document.meta.ready).toBe(true);
    expect((await read(document.meta.identifier)).status).toBe(404);
    expect(mock.documents.has(document.meta.identifier)).toBe(false);
    expect(mock.creditsUsed).toBe(1);
  });
});

describe('credits', () => {
  it('counts one per parsed or failed document and none per rejection, on GET /_mock/credits too', async () => {
    const file = pdf('credits');
    const strict: Fields = [['workspace', 'ws-strict']];
    await upload(file, strict); // parsed: 1
    await upload(file, strict); // duplicate: 0
    await upload(zip, strict); // invalid: 0
    await upload(pdf('credits-cut', 1, false), strict); // conversion failed: 1
    await upload(null, [['url', 'https://files.example/x.pdf']]); // by url: 1
    await upload(zip, [['workspace', 'ws-lenient']]); // 400, no document: 0
    expect(mock.creditsUsed).toBe(3);
    expect(await credits()).toEqual({ used: 3 });
  });
});

describe('reading and listing', () => {
  it('lists by custom_identifier, ready and failed, in snake_case when asked', async () => {
    await upload(pdf('list-ok'), [['customIdentifier', 'batch-1']]);
    await upload(pdf('list-bad', 1, false), [['customIdentifier', 'batch-1']]);
    await upload(pdf('list-other'), [['customIdentifier', 'batch-2']]);
    const list = async (query: string) => {
      const { status, json } = await call(client, 'GET', `/v3/documents?${query}`, { headers: AUTH });
      expect(status).toBe(200);
      return json as { count: number; results: Array<{ meta: { fileName: string } }> };
    };
    expect((await list('custom_identifier=batch-1')).count).toBe(2);
    const failed = await list('custom_identifier=batch-1&failed=true');
    expect(failed.results.map((document) => document.meta.fileName)).toEqual(['list-bad.pdf']);
    expect((await list('custom_identifier=batch-1&failed=false&ready=true')).count).toBe(1);
    expect((await list('ready=false')).count).toBe(0);
    expect((await call(client, 'GET', '/v3/documents?ready=maybe', { headers: AUTH })).status).toBe(400);

    const snake = await call(
      client,
      'GET',
      '/v3/documents?custom_identifier=batch-1&failed=true&snake_case=true',
      {
        headers: AUTH,
      },
    );
    expect(snake.json).toMatchObject({
      count: 1,
      results: [
        { meta: { file_name: 'list-bad.pdf', error_code: 'document_conversion_failed', is_archived: false } },
      ],
    });
  });

  it('lists bare Metas and pages of the set size, as PATCH /_mock/settings says', async () => {
    for (const label of ['page-a', 'page-b', 'page-c']) {
      await upload(pdf(label), [
        ['customIdentifier', 'paged'],
        ['workspace', 'ws-lenient'],
      ]);
    }
    expect((await call(client, 'GET', '/_mock/settings')).json).toEqual({
      documentList: { items: 'document', pageSize: null },
      organizationLists: { shape: 'page', pageSize: null },
    });
    const patch = (body: unknown) =>
      call(client, 'PATCH', '/_mock/settings', {
        body: JSON.stringify(body),
        headers: { 'content-type': 'application/json' },
      });
    const refused = await patch({ documentList: { items: 'tuple' } });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('items');
    expect((await patch({ documentList: { items: 'meta', pageSize: 2 } })).json).toEqual({
      documentList: { items: 'meta', pageSize: 2 },
      organizationLists: { shape: 'page', pageSize: null },
    });
    expect(mock.documentList).toEqual({ items: 'meta', pageSize: 2 });

    const first = await call(client, 'GET', '/v3/documents?custom_identifier=paged&snake_case=true', {
      headers: AUTH,
    });
    const page = first.json as { count: number; next: string; previous: null; results: unknown[] };
    expect(page).toMatchObject({ count: 3, previous: null });
    // Each result is the Meta itself: no `meta` wrapper, no `data`.
    expect(page.results).toEqual([
      expect.objectContaining({
        file_name: 'page-a.pdf',
        custom_identifier: 'paged',
        workspace: { identifier: 'ws-lenient' },
      }),
      expect.objectContaining({ file_name: 'page-b.pdf' }),
    ]);
    const next = new URL(page.next);
    expect(next.searchParams.get('page')).toBe('2');
    const second = await call(client, 'GET', `${next.pathname}${next.search}`, { headers: AUTH });
    expect(second.json).toMatchObject({
      count: 3,
      next: null,
      previous: expect.stringContaining('/v3/documents?custom_identifier=paged'),
      results: [expect.objectContaining({ file_name: 'page-c.pdf' })],
    });
    const beyond = await call(client, 'GET', '/v3/documents?custom_identifier=paged&page=3', {
      headers: AUTH,
    });
    expect(beyond.status).toBe(404);

    mock.setDocumentList({ items: 'document', pageSize: null });
    const whole = await call(client, 'GET', '/v3/documents?custom_identifier=paged', { headers: AUTH });
    expect(whole.json).toMatchObject({
      count: 3,
      next: null,
      results: [{ meta: {} }, { meta: {} }, { meta: {} }],
    });
  });

  it('answers GET in snake_case, every key of the document', async () => {
    const document = asDocument((await upload(pdf('snake', 12), [['customIdentifier', 'c-1']])).json);
    const { status, text, json } = await read(document.meta.identifier, '?snake_case=true');
    expect(status).toBe(200);
    expect(json).toMatchObject({
      meta: {
        custom_identifier: 'c-1',
        ready: true,
        is_confirmed: false,
        is_rejected: false,
        is_archived: false,
      },
      warnings: [{ warning_code: 'too_many_pages' }],
    });
    expect(typeof (json as { meta: Record<string, unknown> }).meta.ready_dt).toBe('string');
    expect(text).not.toMatch(/"[a-z]+[A-Z][A-Za-z]*":/);
    // And camelCase without the parameter.
    expect((await read(document.meta.identifier)).text).toContain('"readyDt"');
  });
});
