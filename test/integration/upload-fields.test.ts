import type { ReceivedUpload } from '@ingest-gateway/mock-parsing-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKey, type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { deliver, queuedId } from '../../harness/smtp-session.ts';

/**
 * Every form field of POST /v3/documents (docs/parsing-api.md, "Uploading a document") configured
 * in a workspace's `upload:` block reaches the service under its spec name and in its wire encoding
 * (the same section), through the whole gateway: real SMTP in, the real mock API out.
 */
describe('upload fields through the gateway', () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startHarness({
      workspaces: [
        {
          identifier: 'ws-fields',
          ingestEmail: 'fields@ingest.test',
          collection: 'outer-collection',
          documentType: 'outer-type',
          upload: {
            collection: 'col-invoices',
            documentType: 'doc-invoice',
            customIdentifier:
              '{queueId}#{attachmentIndex} {fileName} <{messageId}> {from} [{subject}] @{workspace}',
            expiryTime: '30d',
            language: 'zh-TW',
            rejectDuplicates: false,
            regionBias: {
              country: 'vn',
              countries: ['vn', 'th'],
              squareCoordinates: [10.5, 106.25, 11, 107],
              strict: true,
            },
            lowPriority: true,
            compact: false,
            enableValidationTool: false,
            useOcr: true,
            llmHint: 'Totals are in VND',
            limitToExamples: ['example-1', 'example-2'],
            warningMessages: [
              { warningCode: 'too_many_pages', warningDetail: 'only the first 10 pages' },
              { warningCode: 'custom_check' },
            ],
          },
        },
        {
          identifier: 'ws-wait',
          ingestEmail: 'wait@ingest.test',
          upload: {
            wait: true,
            deleteAfterParse: true,
            compact: true,
            useOcr: null,
            rejectDuplicates: null,
            snake_case: true,
          },
        },
      ],
    });
  });
  afterAll(async () => harness?.close());

  /** Sends one message with the given attachments and returns its id and the uploads it caused. */
  async function send(to: string, fileNames: string[]): Promise<{ id: string; uploads: ReceivedUpload[] }> {
    const before = harness.mock.uploads.length;
    const message = await composeMessage({
      from: 'Ann <ann@acme.example>',
      to,
      subject: 'Invoices for March',
      messageId: `<fields-${fileNames.join('-')}@mail.example>`,
      attachments: fileNames.map((filename) => ({ filename, content: uniquePdf(`${to}-${filename}`) })),
    });
    const { data } = await deliver(harness.smtpPort, { to: [to], message });
    const id = queuedId(data);
    for (let entry = 0; entry < fileNames.length; entry++) {
      expect(await harness.settled(id, entry)).toBe('completed');
    }
    return { id, uploads: harness.mock.uploads.slice(before) };
  }

  it('sends every configured field under its spec name, in its wire encoding', async () => {
    const { id, uploads } = await send('fields@ingest.test', ['first.pdf', 'second.pdf']);
    const record = await harness.record(id);
    const expiry = new Date(Date.parse(record.receivedAt) + 30 * 24 * 3_600_000).toISOString();
    const byName = new Map(uploads.map((upload) => [upload.file?.fileName, upload]));

    for (const [index, fileName] of ['first.pdf', 'second.pdf'].entries()) {
      const upload = byName.get(fileName);
      expect(upload?.authorization).toBe(`Bearer ${apiKey}`);
      expect(upload?.file).toMatchObject({ fileName, contentType: 'application/pdf' });
      expect(upload?.fields).toEqual({
        workspace: ['ws-fields'],
        // The upload block wins over the workspace-level collection and documentType.
        collection: ['col-invoices'],
        documentType: ['doc-invoice'],
        fileName: [fileName],
        wait: ['false'],
        customIdentifier: [
          `${id}#${index + 1} ${fileName} <fields-first.pdf-second.pdf@mail.example> ann@acme.example [Invoices for March] @ws-fields`,
        ],
        expiryTime: [expiry],
        language: ['zh-tw'],
        rejectDuplicates: ['false'],
        regionBias: [
          '{"country":"vn","countries":["vn","th"],"squareCoordinates":[10.5,106.25,11,107],"strict":true}',
        ],
        lowPriority: ['true'],
        compact: ['false'],
        enableValidationTool: ['false'],
        useOcr: ['true'],
        llmHint: ['Totals are in VND'],
        limitToExamples: ['example-1', 'example-2'],
        warningMessages: [
          '{"warningCode":"too_many_pages","warningDetail":"only the first 10 pages"}',
          '{"warningCode":"custom_check"}',
        ],
      });
      expect(upload?.fields).not.toHaveProperty('identifier');
      expect(upload?.fields).not.toHaveProperty('url');
    }
    // The service's document carries the identifier the gateway rendered.
    const [first] = record.attachments;
    const document = harness.mock.documents.get(first?.documentIdentifier ?? '');
    expect(document?.meta.customIdentifier).toMatch(new RegExp(`^${id}#1 first\\.pdf`));
  });

  it('sends wait, deleteAfterParse and compact, leaves nulls out, and reads a snake_case answer', async () => {
    const { id, uploads } = await send('wait@ingest.test', ['parsed.pdf']);
    const [upload] = uploads;
    expect(upload?.fields).toEqual({
      workspace: ['ws-wait'],
      fileName: ['parsed.pdf'],
      wait: ['true'],
      // The gateway's own identifier of the upload: the job id (queue id and entry).
      customIdentifier: [`${id}-0`],
      compact: ['true'],
      deleteAfterParse: ['true'],
    });
    expect(upload?.fields).not.toHaveProperty('snake_case');
    // snake_case is the query parameter, and the answer came in snake_case: the entry still
    // has the identifier and the parse outcome, read from `meta.ready_dt` and friends.
    expect(upload?.query).toEqual({ snake_case: 'true' });
    const [entry] = (await harness.record(id)).attachments;
    expect(entry).toMatchObject({
      state: 'uploaded',
      documentIdentifier: upload?.documentIdentifier,
      ready: true,
      failed: false,
      readyDt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      error: null,
    });
  });
});
