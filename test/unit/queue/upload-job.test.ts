import { describe, expect, it } from 'vitest';
import { uploadJobOf } from '../../../src/queue/producer.ts';
import type { AttachmentEntry } from '../../../src/record/message-record.ts';

const entry: AttachmentEntry = {
  entry: 2,
  part: 1,
  fileName: 'invoice.pdf',
  contentType: 'application/octet-stream',
  detectedType: 'application/pdf',
  size: 1234,
  sha256: 'a'.repeat(64),
  workspace: 'ws-inbox',
  state: 'queued',
  reason: null,
  documentIdentifier: null,
  attempts: 0,
  warnings: [],
  updatedAt: '2026-11-28T00:00:00.000Z',
};

describe('uploadJobOf', () => {
  it('gives the job what its upload needs, under a stable id per entry', () => {
    expect(uploadJobOf('mq1', entry)).toEqual({
      name: 'upload',
      data: {
        messageId: 'mq1',
        entry: 2,
        workspace: 'ws-inbox',
        sha256: 'a'.repeat(64),
        fileName: 'invoice.pdf',
        contentType: 'application/pdf',
        size: 1234,
      },
      opts: { jobId: 'mq1-2' },
    });
  });

  it('carries the subaddress tag, so a held message released later uploads with its fields', () => {
    expect(uploadJobOf('mq1', { ...entry, subaddress: 'invoices' }).data).toMatchObject({
      workspace: 'ws-inbox',
      subaddress: 'invoices',
    });
    expect(uploadJobOf('mq1', entry).data).not.toHaveProperty('subaddress');
  });

  it('carries the document type of the address, so a release uploads with it too', () => {
    expect(uploadJobOf('mq1', { ...entry, documentType: 'dt-receipt' }).data).toMatchObject({
      workspace: 'ws-inbox',
      documentType: 'dt-receipt',
    });
    expect(uploadJobOf('mq1', entry).data).not.toHaveProperty('documentType');
  });
});
