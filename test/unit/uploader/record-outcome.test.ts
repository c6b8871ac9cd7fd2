import { describe, expect, it } from 'vitest';
import { parseDocument } from '../../../src/parsing-api/document-schema.ts';
import type { UploadJobData } from '../../../src/queue/upload-queue.ts';
import type { AttachmentEntry, MessageRecord } from '../../../src/record/message-record.ts';
import type { Classification } from '../../../src/uploader/classify-response.ts';
import { documentOutcome, requestErrorOf, uploadContextOf } from '../../../src/uploader/record-outcome.ts';

describe('documentOutcome', () => {
  it.each([
    {
      name: 'a pending document (wait: false)',
      body: { meta: { identifier: 'D', ready: false, failed: false, readyDt: null } },
      expected: { ready: false, failed: false, readyDt: null, error: null },
    },
    {
      name: 'a parsed document (wait: true)',
      body: { meta: { identifier: 'D', ready: true, failed: false, readyDt: '2025-03-01T10:00:05Z' } },
      expected: { ready: true, failed: false, readyDt: '2025-03-01T10:00:05Z', error: null },
    },
    {
      name: 'a rejected document, error at the top',
      body: {
        meta: { identifier: 'D', ready: true, failed: true },
        error: { errorCode: 'document_conversion_failed', errorDetail: 'could not convert' },
      },
      expected: {
        ready: true,
        failed: true,
        readyDt: null,
        error: { errorCode: 'document_conversion_failed', errorDetail: 'could not convert' },
      },
    },
    {
      name: 'a rejected document, error only in meta (snake_case)',
      body: { meta: { identifier: 'D', failed: true, error_code: 'duplicate', error_detail: 'of X' } },
      expected: {
        ready: null,
        failed: true,
        readyDt: null,
        error: { errorCode: 'duplicate', errorDetail: 'of X' },
      },
    },
    {
      name: 'meta.errorCode without failed is not an error',
      body: { meta: { identifier: 'D', failed: false, errorCode: 'stale' } },
      expected: { ready: null, failed: false, readyDt: null, error: null },
    },
  ])('$name', ({ body, expected }) => {
    const document = parseDocument(body);
    expect(document).not.toBeNull();
    if (document) expect(documentOutcome(document)).toEqual(expected);
  });
});

describe('requestErrorOf', () => {
  const requestError = {
    type: 'validation_error',
    errors: [{ attr: 'file', code: 'invalid', detail: 'bad' }],
  };
  it.each<{ verdict: Classification; expected: unknown }>([
    {
      verdict: { outcome: 'failed', reason: 'HTTP 400', detail: 'bad', requestError },
      expected: requestError,
    },
    { verdict: { outcome: 'failed', reason: 'HTTP 404', detail: 'HTTP 404' }, expected: null },
    { verdict: { outcome: 'retry', reason: 'HTTP 503' }, expected: null },
  ])('$verdict.outcome → $expected', ({ verdict, expected }) => {
    expect(requestErrorOf(verdict)).toEqual({ requestError: expected });
  });
});

describe('uploadContextOf', () => {
  const entry = (number: number, workspace: string | null): AttachmentEntry => ({
    entry: number,
    part: number,
    fileName: `f${number}.pdf`,
    contentType: 'application/pdf',
    detectedType: 'application/pdf',
    size: 1,
    sha256: 'x',
    workspace,
    state: workspace === null ? 'skipped' : 'queued',
    reason: null,
    documentIdentifier: null,
    attempts: 0,
    warnings: [],
    updatedAt: '2025-03-01T10:00:00Z',
  });
  // Two documents for two workspaces, then a skipped part: entries 0,1 (ws-a), 2,3 (ws-b), 4.
  const record = {
    id: 'mq1',
    messageId: 'abc@mail.example',
    receivedAt: '2025-03-01T10:00:00.000Z',
    from: 'ann@acme.example',
    subject: 'Invoice',
    attachments: [entry(0, 'ws-a'), entry(1, 'ws-a'), entry(2, 'ws-b'), entry(3, 'ws-b'), entry(4, null)],
  } as unknown as MessageRecord;
  const job = (number: number, workspace: string): UploadJobData => ({
    messageId: 'mq1',
    entry: number,
    workspace,
    sha256: 'x',
    fileName: `f${number}.pdf`,
    contentType: 'application/pdf',
    size: 1,
  });
  const now = new Date('2025-03-02T00:00:00Z');

  it.each([
    { entry: 0, workspace: 'ws-a', index: 1 },
    { entry: 1, workspace: 'ws-a', index: 2 },
    { entry: 2, workspace: 'ws-b', index: 1 },
    { entry: 3, workspace: 'ws-b', index: 2 },
  ])('entry $entry of $workspace is attachment $index', ({ entry: number, workspace, index }) => {
    expect(uploadContextOf(record, job(number, workspace), now)).toEqual({
      fileName: `f${number}.pdf`,
      receivedAt: new Date('2025-03-01T10:00:00.000Z'),
      queueId: 'mq1',
      messageId: 'abc@mail.example',
      from: 'ann@acme.example',
      subject: 'Invoice',
      attachmentIndex: index,
      entry: number,
    });
  });

  it('falls back to the job alone when the record is gone', () => {
    expect(uploadContextOf(null, job(3, 'ws-b'), now)).toEqual({
      fileName: 'f3.pdf',
      receivedAt: now,
      queueId: 'mq1',
      messageId: null,
      from: null,
      subject: null,
      attachmentIndex: 4,
      entry: 3,
    });
  });
});
