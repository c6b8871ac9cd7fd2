import { describe, expect, it } from 'vitest';
import { anyMessage, type MessageFilter, matchesFilter } from '../../../src/record/message-filter.ts';
import type { AttachmentEntry, MessageRecord } from '../../../src/record/message-record.ts';
import { isSettled } from '../../../src/record/message-record.ts';

const entry = (patch: Partial<AttachmentEntry>): AttachmentEntry => ({
  entry: 0,
  part: 1,
  fileName: 'invoice.pdf',
  contentType: 'application/pdf',
  detectedType: 'application/pdf',
  size: 10,
  sha256: 'a'.repeat(64),
  workspace: 'ws-1',
  state: 'uploaded',
  reason: null,
  documentIdentifier: null,
  attempts: 1,
  warnings: [],
  updatedAt: '2024-05-01T12:00:01.000Z',
  ...patch,
});

const record: MessageRecord = {
  id: 'm1',
  messageId: 'abc@mail.example',
  receivedAt: '2024-05-01T12:00:00.000Z',
  remoteAddress: '192.0.2.1',
  envelope: { mailFrom: 'bounce@lists.example', rcptTo: ['Invoices@Ingest.Example', 'other@ingest.example'] },
  from: 'Ann@Acme.Example',
  subject: 'March invoice',
  sourceEmail: 'http://127.0.0.1:8025/v1/messages/m1/raw',
  sourceEmailAddress: 'ann@acme.example',
  size: 100,
  workspaces: [
    { identifier: 'ws-1', admitted: true, reason: null },
    { identifier: 'ws-2', admitted: false, reason: 'no' },
  ],
  authentication: null,
  status: 'enqueued',
  attachments: [
    entry({ entry: 0, fileName: 'invoice.pdf', originalFileName: 'Rechnung März.pdf' }),
    entry({ entry: 1, fileName: 'logo.bin', workspace: null, state: 'skipped' }),
  ],
};

describe('matchesFilter', () => {
  it.each<[string, Partial<MessageFilter>, boolean]>([
    ['no filter', {}, true],
    ['from: header From, any case', { from: 'ann@acme.example' }, true],
    ['from: a substring (the domain)', { from: 'ACME.EXAMPLE' }, true],
    ['from: the envelope sender', { from: 'bounce@lists' }, true],
    ['from: another sender', { from: 'bob@acme.example' }, false],
    ['to: any recipient, any case', { to: 'other@ingest.example' }, true],
    ['to: a substring', { to: 'invoices@' }, true],
    ['to: no recipient', { to: 'nobody@ingest.example' }, false],
    ['workspace: of an attachment', { workspace: 'ws-1' }, true],
    ['workspace: a decision without attachments (refused sender)', { workspace: 'ws-2' }, true],
    ['workspace: exact, not a prefix', { workspace: 'ws' }, false],
    ['state: of any attachment', { state: 'skipped' }, true],
    ['state: of none', { state: 'failed' }, false],
    ['q: the subject', { q: 'march' }, true],
    ['q: a sent file name', { q: 'logo.bin' }, true],
    ['q: the original file name', { q: 'rechnung' }, true],
    ['q: nothing', { q: 'receipt' }, false],
    ['since: the very time received', { since: Date.parse('2024-05-01T12:00:00.000Z') }, true],
    ['since: a millisecond later', { since: Date.parse('2024-05-01T12:00:00.001Z') }, false],
    [
      'all together',
      { from: 'acme', to: 'invoices', workspace: 'ws-1', state: 'uploaded', q: 'invoice' },
      true,
    ],
    [
      'all but one',
      { from: 'acme', to: 'invoices', workspace: 'ws-1', state: 'failed', q: 'invoice' },
      false,
    ],
  ])('%s', (_name, filter, expected) => {
    expect(matchesFilter(record, { ...anyMessage, ...filter })).toBe(expected);
  });

  it('reads a record without From, subject or envelope sender', () => {
    const bare = { ...record, from: null, subject: null, envelope: { mailFrom: null, rcptTo: [] } };
    expect(matchesFilter(bare, { ...anyMessage, from: 'acme' })).toBe(false);
    expect(matchesFilter(bare, { ...anyMessage, q: 'invoice' })).toBe(true);
  });
});

describe('isSettled', () => {
  it.each([
    [['uploaded', 'skipped'], true],
    [['rejected', 'failed'], true],
    [['uploaded', 'uploading'], false],
    [['queued'], false],
  ] as const)('%j: %s', (states, expected) => {
    expect(isSettled({ attachments: states.map((state) => entry({ state })) })).toBe(expected);
  });
});
