import { describe, expect, it } from 'vitest';
import { composeNotice, outcomeOf } from '../../../src/notices/notice-text.ts';
import type { AttachmentEntry } from '../../../src/record/message-record.ts';

const entry = (patch: Partial<AttachmentEntry>): AttachmentEntry => ({
  entry: 0,
  part: 1,
  fileName: 'invoice.pdf',
  contentType: 'application/pdf',
  detectedType: 'application/pdf',
  size: 10,
  sha256: 'a'.repeat(64),
  workspace: 'ws-a',
  state: 'uploaded',
  reason: null,
  documentIdentifier: null,
  attempts: 1,
  warnings: [],
  updatedAt: '2026-11-28T10:00:01.000Z',
  ...patch,
});

describe('outcomeOf: each outcome in a supplier’s words', () => {
  it.each<[string, Partial<AttachmentEntry>, string]>([
    ['uploaded', { state: 'uploaded' }, 'received and passed on for processing.'],
    [
      'rejected as a duplicate',
      {
        state: 'rejected',
        reason: 'duplicate_document: already uploaded',
        error: { errorCode: 'duplicate_document', errorDetail: '' },
      },
      'not processed: the same document was already received before (a duplicate).',
    ],
    [
      'rejected otherwise',
      { state: 'rejected', reason: 'invalid_file: x' },
      'not processed: the processing service refused this document.',
    ],
    [
      'failed',
      { state: 'failed', reason: 'gave up after 15 attempts' },
      'not processed: it could not be passed on for processing, even after repeated attempts.',
    ],
    [
      'unsupported type',
      { state: 'skipped', reason: 'unsupported type image/gif (declared image/gif)' },
      'not processed: this type of file is not accepted.',
    ],
    ['empty', { state: 'skipped', reason: 'empty part' }, 'not processed: the file is empty.'],
    [
      'locked PDF',
      { state: 'skipped', reason: 'encrypted_pdf: a password-protected PDF' },
      'not processed: the PDF is password-protected and cannot be read. Please send it without a password.',
    ],
    ['held', { state: 'held' }, 'waiting for review.'],
  ])('%s', (_name, patch, expected) => {
    expect(outcomeOf(entry(patch))).toBe(expected);
  });
});

describe('composeNotice', () => {
  const record = {
    id: 'q1',
    subject: 'Invoices\r\nBcc: victim@example.com',
    receivedAt: '2026-11-28T10:41:00.000Z',
    envelope: { mailFrom: 'ap@supplier.example', rcptTo: ['invoices@ingest.example'] },
  };

  it('names the message, each file with its outcome, and what to do', () => {
    const { subject, text } = composeNotice('problem', record, [
      entry({ originalFileName: 'Rechnung März.pdf', fileName: 'Rechnung_Marz.pdf' }),
      entry({
        entry: 1,
        fileName: 'logo.gif',
        workspace: null,
        state: 'skipped',
        reason: 'unsupported type image/gif',
      }),
    ]);
    // The quoted subject is one line: no header can be smuggled into the notice's.
    expect(subject).toBe('Not all documents could be processed: InvoicesBcc: victim@example.com');
    expect(text).toContain('the e-mail you sent to invoices@ingest.example on 28 November 2026, 10:41 UTC');
    expect(text).toContain('  1. Rechnung März.pdf: received and passed on for processing.');
    expect(text).toContain('  2. logo.gif: not processed: this type of file is not accepted.');
    expect(text).toContain('Files are accepted as PDF');
    expect(text).toContain('Reference: q1');
  });

  it.each([
    ['held', 'Held for review: '],
    ['receipt', 'Documents received: '],
  ] as const)('%s has its own subject', (kind, start) => {
    expect(composeNotice(kind, { ...record, subject: null }, [entry({})]).subject).toBe(
      `${start}(no subject)`,
    );
  });
});
