import type { Document } from '../parsing-api/document-schema.ts';
import type { UploadJobData } from '../queue/upload-queue.ts';
import type { AttachmentEntry, MessageRecord } from '../record/message-record.ts';
import type { Classification } from './classify-response.ts';
import type { UploadContext } from './upload-fields.ts';

/**
 * What the message record keeps of the service's answers, and what the uploader reads from
 * the record to fill an upload's fields. Pure, so both the upload worker and the completion
 * poller write an entry the same way.
 */

export type OutcomeFields = Pick<AttachmentEntry, 'error' | 'ready' | 'failed' | 'readyDt'>;

/**
 * The parse outcome a Document shows: `meta.ready`, `meta.failed`, `meta.readyDt`, and its
 * `error` (or the copy in meta when only that is set). Absent values are recorded as null,
 * so a later answer replaces an earlier one completely.
 */
export function documentOutcome(document: Document): OutcomeFields {
  const { meta } = document;
  const errorCode = document.error?.errorCode ?? (meta.failed ? meta.errorCode : null) ?? null;
  const errorDetail = document.error?.errorDetail ?? meta.errorDetail ?? '';
  return {
    ready: meta.ready ?? null,
    failed: meta.failed ?? null,
    readyDt: meta.readyDt ?? null,
    error: errorCode === null ? null : { errorCode, errorDetail },
  };
}

/** The RequestError of a failed verdict, as the entry's `requestError`; null for any other. */
export function requestErrorOf(verdict: Classification): Pick<AttachmentEntry, 'requestError'> {
  return { requestError: verdict.outcome === 'failed' ? (verdict.requestError ?? null) : null };
}

/**
 * The message and attachment facts an upload's fields are made of, from the record (null
 * when it is gone: the upload still goes, with what the job itself knows).
 */
export function uploadContextOf(record: MessageRecord | null, job: UploadJobData, now: Date): UploadContext {
  const parsed = record ? Date.parse(record.receivedAt) : Number.NaN;
  return {
    fileName: job.fileName,
    receivedAt: Number.isNaN(parsed) ? now : new Date(parsed),
    queueId: job.messageId,
    messageId: record?.messageId ?? null,
    from: record?.from ?? null,
    subject: record?.subject ?? null,
    attachmentIndex: attachmentIndex(record, job),
    entry: job.entry,
  };
}

/**
 * The entry's position, from 1, among the entries of its workspace: each admitted workspace
 * gets the message's documents in the same order, so the first document is 1 in every one.
 */
function attachmentIndex(record: MessageRecord | null, job: UploadJobData): number {
  const ofWorkspace = (record?.attachments ?? []).filter((entry) => entry.workspace === job.workspace);
  const position = ofWorkspace.findIndex((entry) => entry.entry === job.entry);
  // Without the record, the entry number is the best stand-in (exact for the first workspace).
  return position === -1 ? job.entry + 1 : position + 1;
}
