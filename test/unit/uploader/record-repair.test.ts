import { describe, expect, it } from 'vitest';
import type { AttachmentEntry } from '../../../src/record/message-record.ts';
import { type FinishedJob, repairOf } from '../../../src/uploader/record-repair.ts';

const entry = (patch: Partial<AttachmentEntry> = {}): AttachmentEntry => ({
  entry: 0,
  part: 1,
  fileName: 'invoice.pdf',
  contentType: 'application/pdf',
  detectedType: 'application/pdf',
  size: 10,
  sha256: 'ab',
  workspace: 'ws-open',
  state: 'uploading',
  reason: null,
  documentIdentifier: null,
  attempts: 1,
  warnings: [],
  updatedAt: '2025-01-01T00:00:00.000Z',
  ...patch,
});

const failed: FinishedJob = { state: 'failed', failedReason: 'job stalled more than allowable limit' };
const completed = (returnValue: unknown): FinishedJob => ({ state: 'completed', returnValue });
const result = { documentIdentifier: 'DOC-1', state: 'uploaded', reason: null };

describe('repairOf', () => {
  it.each([
    {
      name: 'failed job, entry still uploading: failed, with the reason',
      job: failed,
      entry: entry(),
      patch: { state: 'failed', reason: 'gave up: job stalled more than allowable limit' },
    },
    {
      name: 'failed job, entry still queued: failed',
      job: failed,
      entry: entry({ state: 'queued', attempts: 0 }),
      patch: { state: 'failed', reason: 'gave up: job stalled more than allowable limit' },
    },
    {
      name: 'failed job, failure recorded by its run: left alone',
      job: failed,
      entry: entry({ state: 'failed', reason: 'upload refused' }),
      patch: null,
    },
    {
      name: 'failed job whose upload had settled: the document stands',
      job: failed,
      entry: entry({ state: 'uploaded', documentIdentifier: 'DOC-1' }),
      patch: null,
    },
    {
      name: 'completed job, entry still uploading: settled from its return value',
      job: completed(result),
      entry: entry(),
      patch: { state: 'uploaded', documentIdentifier: 'DOC-1', reason: null },
    },
    {
      name: 'completed job of a rejected document: rejected, with its reason',
      job: completed({ documentIdentifier: 'DOC-2', state: 'rejected', reason: 'duplicate: of DOC-0' }),
      entry: entry({ state: 'queued' }),
      patch: { state: 'rejected', documentIdentifier: 'DOC-2', reason: 'duplicate: of DOC-0' },
    },
    {
      name: 'completed job, entry settled: left alone',
      job: completed(result),
      entry: entry({ state: 'uploaded', documentIdentifier: 'DOC-1' }),
      patch: null,
    },
    {
      name: 'completed job of an earlier release (no state): left alone',
      job: completed({ documentIdentifier: 'DOC-1' }),
      entry: entry(),
      patch: null,
    },
    {
      name: 'completed job without a return value: left alone',
      job: completed(null),
      entry: entry(),
      patch: null,
    },
  ])('$name', ({ job, entry, patch }) => {
    expect(repairOf(job, entry)).toEqual(patch);
  });
});
