import { toSnakeCase } from '@ingest-gateway/mock-parsing-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { deliver, queuedId } from '../../harness/smtp-session.ts';
import type { AttachmentEntry } from '../../src/record/message-record.ts';

/**
 * What the gateway records of each kind of answer (docs/parsing-api.md, "The Document", "How
 * each answer is treated"): crafted with the mock's fault injection, so each case is exactly the
 * answer named.
 */

const document = (meta: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  extractor: 'invoice',
  meta: { identifier: 'crafted', fileName: 'x.pdf', ready: false, failed: false, ...meta },
  data: {},
  ...extra,
});

describe('upload results', () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startHarness({
      upload: { attempts: 3 },
      workspaces: [
        { identifier: 'ws-results', ingestEmail: 'results@ingest.test' },
        { identifier: 'ws-snake', ingestEmail: 'snake@ingest.test', upload: { snake_case: true } },
        { identifier: 'ws-parsed', ingestEmail: 'parsed@ingest.test', upload: { wait: true } },
      ],
    });
  });
  afterAll(async () => harness?.close());

  /** Delivers one PDF, waits for its upload job to finish, and returns the entry and how it ended. */
  async function upload(
    label: string,
    to = 'results@ingest.test',
  ): Promise<{ entry: AttachmentEntry | undefined; job: string; uploadsDuring: number }> {
    const before = harness.mock.uploads.length;
    const message = await composeMessage({
      attachments: [{ filename: `${label}.pdf`, content: uniquePdf(label) }],
    });
    const { data } = await deliver(harness.smtpPort, { to: [to], message });
    const id = queuedId(data);
    const job = await harness.settled(id, 0);
    const [entry] = (await harness.record(id)).attachments;
    return { entry, job, uploadsDuring: harness.mock.uploads.length - before };
  }

  it('records a document_conversion_failed Document (201) as rejected with its code, not retried', async () => {
    harness.mock.enqueueFault({
      status: 201,
      body: document(
        { identifier: 'conv-1', ready: true, failed: true },
        {
          error: { errorCode: 'document_conversion_failed', errorDetail: 'The file could not be converted.' },
        },
      ),
    });
    const { entry, job, uploadsDuring } = await upload('conversion');
    expect(job).toBe('completed');
    expect(entry).toMatchObject({
      state: 'rejected',
      attempts: 1,
      documentIdentifier: 'conv-1',
      reason: 'document_conversion_failed: The file could not be converted.',
      error: { errorCode: 'document_conversion_failed', errorDetail: 'The file could not be converted.' },
      ready: true,
      failed: true,
    });
    // The crafted answer was the only request: no second upload followed it.
    expect(uploadsDuring).toBe(0);
  });

  it('records a rejected duplicate (200) as rejected', async () => {
    harness.mock.enqueueFault({
      status: 200,
      body: document(
        { identifier: 'dup-1', ready: true, failed: true, errorCode: 'duplicate_document' },
        { error: { errorCode: 'duplicate_document', errorDetail: 'The document duplicates document AbC.' } },
      ),
    });
    const { entry, uploadsDuring } = await upload('duplicate');
    expect(entry).toMatchObject({
      state: 'rejected',
      attempts: 1,
      error: { errorCode: 'duplicate_document', errorDetail: 'The document duplicates document AbC.' },
    });
    expect(uploadsDuring).toBe(0);
  });

  it('records a document rejected as an invalid type, error only in meta and in snake_case', async () => {
    harness.mock.enqueueFault({
      status: 200,
      body: toSnakeCase(
        document({
          identifier: 'type-1',
          ready: true,
          failed: true,
          readyDt: '2025-03-01T10:00:00Z',
          errorCode: 'invalid_document_type',
          errorDetail: 'Not an invoice.',
        }),
      ),
    });
    const { entry } = await upload('invalid-type', 'snake@ingest.test');
    expect(entry).toMatchObject({
      state: 'rejected',
      documentIdentifier: 'type-1',
      reason: 'invalid_document_type: Not an invoice.',
      error: { errorCode: 'invalid_document_type', errorDetail: 'Not an invoice.' },
      readyDt: '2025-03-01T10:00:00Z',
    });
  });

  it('records the warnings of an accepted document', async () => {
    harness.mock.enqueueFault({
      status: 200,
      body: document(
        { identifier: 'warn-1', ready: true, readyDt: '2025-03-01T10:00:00Z' },
        {
          warnings: [
            { warningCode: 'too_many_pages', warningDetail: 'Only the first 10 pages were parsed.' },
          ],
        },
      ),
    });
    const { entry } = await upload('warnings');
    expect(entry).toMatchObject({
      state: 'uploaded',
      documentIdentifier: 'warn-1',
      warnings: [{ warningCode: 'too_many_pages', warningDetail: 'Only the first 10 pages were parsed.' }],
      ready: true,
      failed: false,
      readyDt: '2025-03-01T10:00:00Z',
      error: null,
    });
  });

  it('reads a snake_case answer with warnings', async () => {
    harness.mock.enqueueFault({
      status: 201,
      body: toSnakeCase(
        document(
          { identifier: 'snake-1' },
          { warnings: [{ warningCode: 'too_many_pages', warningDetail: 'ten' }] },
        ),
      ),
    });
    const { entry } = await upload('snake-warnings', 'snake@ingest.test');
    expect(entry).toMatchObject({
      state: 'uploaded',
      documentIdentifier: 'snake-1',
      warnings: [{ warningCode: 'too_many_pages', warningDetail: 'ten' }],
      ready: false,
    });
  });

  it('surfaces a RequestError on the entry and in the log', async () => {
    const requestError = {
      type: 'validation_error',
      errors: [
        { attr: 'language', code: 'invalid_choice', detail: '"xx" is not a valid choice.' },
        { attr: null, code: 'invalid', detail: 'Something else.' },
      ],
    };
    harness.mock.enqueueFault({ status: 400, body: requestError });
    const { entry, job, uploadsDuring } = await upload('request-error');
    expect(job).toBe('failed');
    expect(entry).toMatchObject({ state: 'failed', attempts: 1, requestError });
    expect(entry?.reason).toBe(
      'HTTP 400 Bad Request: language: invalid_choice: "xx" is not a valid choice.; invalid: Something else.',
    );
    expect(uploadsDuring).toBe(0);
    const logged = harness.logs.lines
      .map((line) => JSON.parse(line) as { msg?: string; requestError?: unknown })
      .find((line) => line.msg === 'upload failed' && line.requestError !== undefined);
    expect(logged?.requestError).toEqual(requestError);
  });

  it('records the parse outcome of a wait: true upload', async () => {
    const { entry } = await upload('parsed', 'parsed@ingest.test');
    const document = harness.mock.documents.get(entry?.documentIdentifier ?? '');
    expect(document?.meta.ready).toBe(true);
    expect(entry).toMatchObject({
      state: 'uploaded',
      ready: true,
      failed: false,
      readyDt: document?.meta.readyDt,
      error: null,
    });
    expect(entry?.readyDt).toMatch(/^\d{4}-\d\d-\d\dT/);
  });
});
