import { removeUnsafeCharacters } from '../mail/sanitize-file-name.ts';
import type { AttachmentEntry, MessageRecord } from '../record/message-record.ts';
import type { NoticeKind } from './notice-decision.ts';

/**
 * The words of a notice, for a supplier who sent an invoice and knows nothing of parsing
 * services, queues or HTTP: what happened to each file, and what to do about it. Pure.
 */

export interface NoticeText {
  subject: string;
  text: string;
}

/** The file types the service takes, as a supplier names them (README, "Which parts are documents"). */
const ACCEPTED_TYPES = 'PDF, Word (DOC, DOCX, ODT, RTF), Excel (XLS, XLSX), text, HTML, PNG, JPG and TIFF';

/** Longest subject of the received message quoted in the notice's Subject; characters. */
const QUOTED_SUBJECT_MAX = 120;

export function composeNotice(
  kind: NoticeKind,
  record: Pick<MessageRecord, 'id' | 'subject' | 'receivedAt' | 'envelope'>,
  documents: readonly AttachmentEntry[],
): NoticeText {
  const quoted = quoteSubject(record.subject);
  const subject = {
    held: `Held for review: ${quoted}`,
    problem: `Not all documents could be processed: ${quoted}`,
    receipt: `Documents received: ${quoted}`,
  }[kind];
  const lines = [
    'Hello,',
    '',
    `this is an automatic message about the e-mail you sent to ${record.envelope.rcptTo.join(', ')} on ${readableTime(record.receivedAt)}:`,
    `  Subject: ${quoted}`,
    '',
    opening(kind),
    '',
    ...documents.map((entry, index) => `  ${index + 1}. ${nameOf(entry)}: ${outcomeOf(entry)}`),
    '',
    ...closing(kind, documents),
    `Reference: ${record.id}`,
    '',
    'Please do not reply to this message: replies are not read.',
    '',
  ];
  return { subject, text: lines.join('\n') };
}

function opening(kind: NoticeKind): string {
  switch (kind) {
    case 'held':
      return 'Your e-mail has been received, but it is held for review because your address is not yet on the list of senders this address accepts. Nothing of it has been processed yet. These are the files it holds:';
    case 'problem':
      return 'Not every file could be processed. This is what happened to each one:';
    case 'receipt':
      return 'Every document was received and passed on for processing:';
  }
}

function closing(kind: NoticeKind, documents: readonly AttachmentEntry[]): string[] {
  if (kind === 'held') {
    return [
      'The recipient can accept your e-mail. If they expect documents from you, please ask them to add your address; you do not need to send it again.',
      '',
    ];
  }
  if (kind === 'receipt') return [];
  const lines: string[] = [];
  if (documents.some((entry) => entry.state === 'failed')) {
    lines.push('Please send the files that could not be processed again later, or by another way.');
  }
  if (
    documents.some((entry) => entry.state === 'skipped' && (entry.reason ?? '').startsWith('unsupported'))
  ) {
    lines.push(`Files are accepted as ${ACCEPTED_TYPES}.`);
  }
  return lines.length === 0 ? [] : [...lines, ''];
}

/** What became of one entry, in plain words. */
export function outcomeOf(entry: Pick<AttachmentEntry, 'state' | 'reason' | 'error'>): string {
  const reason = entry.reason ?? '';
  switch (entry.state) {
    case 'uploaded':
      return 'received and passed on for processing.';
    case 'rejected':
      return /duplicate/i.test(`${entry.error?.errorCode ?? ''} ${reason}`)
        ? 'not processed: the same document was already received before (a duplicate).'
        : 'not processed: the processing service refused this document.';
    case 'failed':
      return 'not processed: it could not be passed on for processing, even after repeated attempts.';
    case 'held':
      return 'waiting for review.';
    case 'skipped':
      if (reason === 'empty part') return 'not processed: the file is empty.';
      if (reason.startsWith('encrypted_pdf')) {
        return 'not processed: the PDF is password-protected and cannot be read. Please send it without a password.';
      }
      if (reason.startsWith('encrypted_smime')) {
        return 'not processed: the e-mail was encrypted and cannot be read here. Please send it unencrypted.';
      }
      return 'not processed: this type of file is not accepted.';
    default:
      return 'not processed.';
  }
}

/** The name the sender gave the file, else the one it was sent on under; safe to show. */
function nameOf(entry: Pick<AttachmentEntry, 'originalFileName' | 'fileName'>): string {
  const name = removeUnsafeCharacters(entry.originalFileName ?? entry.fileName).trim();
  return name === '' ? entry.fileName : name;
}

function quoteSubject(subject: string | null): string {
  const text = removeUnsafeCharacters(subject ?? '')
    .replace(/\s+/g, ' ')
    .trim();
  if (text === '') return '(no subject)';
  return text.length > QUOTED_SUBJECT_MAX ? `${text.slice(0, QUOTED_SUBJECT_MAX - 1)}…` : text;
}

/** `28 November 2026, 10:41 UTC`: unambiguous wherever the supplier is. */
function readableTime(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const day = date.toLocaleDateString('en-GB', {
    day: 'numeric',
    month: 'long',
    year: 'numeric',
    timeZone: 'UTC',
  });
  const time = date.toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit', timeZone: 'UTC' });
  return `${day}, ${time} UTC`;
}
