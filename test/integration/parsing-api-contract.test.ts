import { createHash } from 'node:crypto';
import {
  createMockApi,
  type MockApi,
  type MockApiOptions,
  workspaceSeedsFromConfig,
} from '@ingest-gateway/mock-parsing-api';
import { afterEach, describe, expect, it } from 'vitest';
import { everyUploadField, testConfig, testWorkspace } from '../../harness/test-config.ts';
import type { FileWorkspace, WorkspaceConfig } from '../../src/config/schema.ts';
import { createLogger } from '../../src/logger.ts';
import { type DocumentListing, readListPage } from '../../src/parsing-api/document-list.ts';
import { createParsingApiClient, type ParsingApiClient } from '../../src/parsing-api/parsing-api-client.ts';
import type { WorkspaceUpdate } from '../../src/parsing-api/service-workspace.ts';
import { createWorkspaceClient, type WorkspaceClient } from '../../src/parsing-api/workspace-client.ts';
import { classifyResponse, inspectResponse } from '../../src/uploader/classify-response.ts';
import { findEarlierUpload } from '../../src/uploader/find-earlier-upload.ts';
import { type UploadContext, uploadFields, uploadQuery } from '../../src/uploader/upload-fields.ts';

/**
 * The contract between the gateway's parsing-API client (src/parsing-api) and the mock
 * (@ingest-gateway/mock-parsing-api), which the gateway's other tests, its mock mode and its
 * users' test suites upload to: every call the gateway makes, built as the gateway builds it
 * and sent by its own client, must be taken by the mock as the service takes it, and what
 * comes back must read as the gateway reads it (classify-response.ts, document-list.ts,
 * find-earlier-upload.ts, service-workspace.ts). The calls: the upload, the document read
 * that completion tracking polls, the lookup by customIdentifier before a retried upload, and
 * the workspace get and update of the `workspace` commands; the gateway subscribes to no
 * resthooks. multipart-contract.test.ts holds the same upload against the spec on the bytes,
 * without the mock; the mock's own suite holds the mock to the spec.
 */

const API_KEY = 'contract-key-5d0a3e';
const logger = createLogger({ level: 'silent' });
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** A one-page PDF with its end marker; `label` makes the bytes differ (duplicates are checked). */
const pdf = (label: string) =>
  Buffer.from(`%PDF-1.4\n%${label}\n1 0 obj<</Type/Catalog>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n`);

const context = (fileName: string, queueId = 'mq-contract'): UploadContext => ({
  fileName,
  receivedAt: new Date('2025-03-01T10:00:00.000Z'),
  queueId,
  messageId: 'm@contract.example',
  from: 'sender@contract.example',
  subject: 'Invoice',
  attachmentIndex: 1,
  entry: 0,
});

let mock: MockApi;
let baseUrl: string;
let client: ParsingApiClient;

/** The mock as mock mode starts it: seeded with the configured workspaces. */
async function start(workspaces: readonly FileWorkspace[], options: Partial<MockApiOptions> = {}) {
  mock = createMockApi({
    apiKey: API_KEY,
    logger,
    workspaces: workspaceSeedsFromConfig(workspaces),
    ...options,
  });
  baseUrl = (await mock.start({ host: '127.0.0.1', port: 0 })).url;
  client = createParsingApiClient({ baseUrl, apiKey: API_KEY, timeoutMs: 10_000, logger });
}

afterEach(async () => {
  await client?.close();
  await mock?.close();
});

/** Uploads `file` as the uploader does for `workspace`. */
function upload(workspace: WorkspaceConfig, file: Buffer, fileName: string, queueId?: string) {
  return client.uploadDocument({
    file,
    fileName,
    contentType: 'application/pdf',
    fields: uploadFields(workspace, context(fileName, queueId)),
    ...uploadQuery(workspace),
  });
}

const classify = (result: Awaited<ReturnType<ParsingApiClient['uploadDocument']>>) =>
  classifyResponse({ result, attempt: 1, maxAttempts: 3 });

describe('POST /v3/documents', () => {
  it('takes every field the gateway sends, and answers the document as the gateway reads it', async () => {
    await start([everyUploadField]);
    const file = pdf('every-field');
    const sent = uploadFields(everyUploadField, context('Rechnung März 2025.pdf'));
    const result = await upload(everyUploadField, file, 'Rechnung März 2025.pdf');

    expect(result).toMatchObject({ kind: 'response', status: 200 });
    const [received] = mock.uploads;
    expect(received?.authorization).toBe(`Bearer ${API_KEY}`);
    expect(received?.query).toEqual({ snake_case: 'true' });
    // Every field as sent, repeated ones (limitToExamples) in order: nothing lost or renamed.
    const names = [...new Set(sent.map(([name]) => name))];
    expect(received?.fields).toEqual(
      Object.fromEntries(names.map((name) => [name, sent.filter(([n]) => n === name).map(([, v]) => v)])),
    );
    expect(received?.file).toMatchObject({
      fileName: 'Rechnung März 2025.pdf',
      contentType: 'application/pdf',
      size: file.length,
      sha256: sha256(file),
    });

    // The answer is in snake_case, as asked, and reads as the document the upload created.
    const response = inspectResponse({ result, attempt: 1, maxAttempts: 3 });
    expect(response.verdict).toEqual({
      outcome: 'uploaded',
      documentIdentifier: received?.documentIdentifier,
      warnings: [],
    });
    expect(response.document?.meta).toMatchObject({
      identifier: received?.documentIdentifier,
      customIdentifier: 'mq-contract-1',
      fileName: 'Rechnung März 2025.pdf',
      ready: true,
      failed: false,
      expiryTime: '2025-03-01T22:00:00.000Z',
      language: 'de',
      documentType: 'doc-type-1',
      collection: { identifier: 'col-1' },
      workspace: { identifier: 'ws-contract' },
    });
  });

  it('answers an upload not waited for (wait=false) 201 with the pending document, read as uploaded', async () => {
    const workspace = testWorkspace({ identifier: 'ws-plain' });
    await start([workspace], { processingMs: 60_000 });
    const result = await upload(workspace, pdf('no-wait'), 'later.pdf');
    expect(result).toMatchObject({ kind: 'response', status: 201 });
    const response = inspectResponse({ result, attempt: 1, maxAttempts: 3 });
    expect(response.verdict).toEqual({
      outcome: 'uploaded',
      documentIdentifier: mock.uploads[0]?.documentIdentifier,
      warnings: [],
    });
    expect(response.document?.meta).toMatchObject({ ready: false, failed: false, fileName: 'later.pdf' });
  });

  it('answers the same bytes again in a workspace that rejects duplicates with a document read as rejected', async () => {
    await start([everyUploadField]);
    const file = pdf('twice');
    expect(classify(await upload(everyUploadField, file, 'a.pdf', 'mq-first'))).toMatchObject({
      outcome: 'uploaded',
    });
    expect(classify(await upload(everyUploadField, file, 'b.pdf', 'mq-second'))).toMatchObject({
      outcome: 'rejected',
      errorCode: 'duplicate_document',
    });
  });

  it('answers a PDF cut short with a failed document read as rejected', async () => {
    await start([everyUploadField]);
    const cut = Buffer.from('%PDF-1.4\n1 0 obj<</Type/Catalog>>endobj\n');
    expect(classify(await upload(everyUploadField, cut, 'cut.pdf'))).toMatchObject({
      outcome: 'rejected',
      errorCode: 'document_conversion_failed',
    });
  });

  it('refuses a file the service does not take with a 400 RequestError, read as failed with its detail', async () => {
    const workspace = testWorkspace();
    await start([workspace]);
    const zip = Buffer.from('504b0506000000000000000000000000000000000000', 'hex');
    expect(classify(await upload(workspace, zip, 'archive.pdf'))).toMatchObject({
      outcome: 'failed',
      reason: 'HTTP 400 Bad Request',
      detail: expect.stringMatching(/^file: invalid: Unsupported file type/),
    });
    expect(mock.uploads).toHaveLength(0);
  });

  it('refuses a wrong key with 401, read as unauthorized', async () => {
    const workspace = testWorkspace();
    await start([workspace]);
    const wrong = createParsingApiClient({ baseUrl, apiKey: 'wrong-key', timeoutMs: 10_000, logger });
    try {
      const result = await wrong.uploadDocument({
        file: pdf('wrong-key'),
        fileName: 'a.pdf',
        contentType: 'application/pdf',
        fields: uploadFields(workspace, context('a.pdf')),
      });
      expect(classify(result)).toMatchObject({ outcome: 'unauthorized', status: 401 });
    } finally {
      await wrong.close();
    }
    expect(mock.uploads).toHaveLength(0);
  });
});

describe('GET /v3/documents/{identifier}', () => {
  it('answers the uploaded document in the casing asked, and a 404 RequestError for an unknown one', async () => {
    const workspace = testWorkspace();
    await start([workspace]);
    await upload(workspace, pdf('read-back'), 'read-back.pdf');
    const id = mock.uploads[0]?.documentIdentifier ?? '';

    for (const snakeCase of [false, true]) {
      const result = await client.getDocument(id, { snakeCase });
      const response = inspectResponse({ result, attempt: 1, maxAttempts: 3 });
      expect(response.verdict).toMatchObject({ outcome: 'uploaded', documentIdentifier: id });
      expect(response.document?.meta).toMatchObject({
        identifier: id,
        fileName: 'read-back.pdf',
        ready: true,
        readyDt: expect.any(String),
        workspace: { identifier: workspace.identifier },
      });
    }
    expect(await client.getDocument('no/such')).toMatchObject({
      status: 404,
      body: { errors: [{ code: 'not_found' }] },
    });
  });
});

describe('GET /v3/documents?custom_identifier=…', () => {
  const fileNames = (listing: DocumentListing) =>
    [...listing.followed, listing.last].flatMap((answer) => {
      const page = answer.kind === 'response' ? readListPage(answer.body) : undefined;
      return page?.readable
        ? page.items.map((item) => ('document' in item ? item.document.meta.fileName : '?'))
        : [];
    });

  it.each([
    { items: 'document', pageSize: null, snakeCase: false },
    { items: 'meta', pageSize: null, snakeCase: true },
    { items: 'document', pageSize: 1, snakeCase: true },
    { items: 'meta', pageSize: 1, snakeCase: false },
  ] as const)(
    'finds the earlier upload in every list shape: $items items, page size $pageSize, snake_case $snakeCase',
    async ({ items, pageSize, snakeCase }) => {
      const workspace = testWorkspace({ identifier: 'ws-list' });
      await start([workspace], { documentList: { items, pageSize } });
      const tagged = (label: string, queueId: string) =>
        client.uploadDocument({
          file: pdf(label),
          fileName: `${label}.pdf`,
          contentType: 'application/pdf',
          fields: uploadFields(workspace, context(`${label}.pdf`, queueId)),
        });
      for (const label of ['a', 'b', 'c']) await tagged(label, 'mq-listed');
      await tagged('other', 'mq-other');

      const customIdentifier = mock.uploads[0]?.fields.customIdentifier?.[0] ?? '';
      const listing = await client.findDocuments(customIdentifier, { snakeCase });
      expect(listing.followed).toHaveLength(pageSize === null ? 0 : 2);
      expect(fileNames(listing)).toEqual(['a.pdf', 'b.pdf', 'c.pdf']);
      expect(findEarlierUpload(listing, customIdentifier, 'ws-list')).toEqual({
        found: expect.objectContaining({ meta: expect.objectContaining({ fileName: 'a.pdf' }) }),
      });
      const none = await client.findDocuments('nothing-here', { snakeCase });
      expect(findEarlierUpload(none, 'nothing-here', 'ws-list')).toEqual({ found: null });
    },
  );
});

describe('/v3/workspaces/{identifier}', () => {
  let workspaces: WorkspaceClient;
  afterEach(async () => {
    await workspaces?.close();
  });

  it('answers a configured workspace with its ingest address and allow-list, its identifier escaped', async () => {
    const config = testConfig({
      workspaces: [
        {
          identifier: 'ws 1/ä',
          ingestEmail: 'Docs@Ingest.Example',
          whitelistIngestAddresses: ['*@acme.example'],
        },
      ],
    });
    await start(config.workspaces);
    workspaces = createWorkspaceClient({ baseUrl, apiKey: API_KEY, timeoutMs: 10_000 });
    const workspace = await workspaces.getWorkspace('ws 1/ä');
    expect(workspace).toMatchObject({
      identifier: 'ws 1/ä',
      ingestEmail: config.workspaces[0]?.ingestEmail,
      whitelistIngestAddresses: ['*@acme.example'],
    });
    // Fields the gateway does not model pass through, so `workspace get` prints all of them.
    expect(workspace).toHaveProperty('organization.validationToolConfig.theme');
  });

  it('takes exactly the update the gateway sends and answers the updated workspace', async () => {
    await start([testWorkspace({ identifier: 'ws-update' })]);
    workspaces = createWorkspaceClient({ baseUrl, apiKey: API_KEY, timeoutMs: 10_000 });
    const update: WorkspaceUpdate = {
      name: 'Invoices',
      visibility: 'private',
      rejectInvalidDocuments: true,
      rejectDuplicates: null,
      whitelistIngestAddresses: ['*@a.example'],
    };
    expect(await workspaces.updateWorkspace('ws-update', update)).toMatchObject(update);
    expect(mock.workspaces.requests.at(-1)).toMatchObject({ method: 'PATCH', body: update, status: 200 });
    expect(await workspaces.getWorkspace('ws-update')).toMatchObject(update);
  });
});
