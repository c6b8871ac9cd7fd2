import type { MimeNode } from '@zone-eu/mailsplit';
import { decodeRawFileName } from './raw-file-name.ts';

/** What the headers of one MIME leaf say about it, before any of its bytes are read. */
export interface LeafDescription {
  partNumber: string;
  /** Lower-cased Content-Type without parameters; `text/plain` when absent (RFC 2045 5.2). */
  declaredType: string;
  disposition: 'inline' | 'attachment' | null;
  /** Decoded (RFC 2231, RFC 2047) by mailsplit; not sanitised. */
  fileName: string | null;
  /** Without angle brackets, as written. */
  contentId: string | null;
  /** The Content-Type's charset parameter as written, or null: what a body's text is encoded in. */
  charset: string | null;
  role: 'body' | 'candidate';
  /**
   * Why the headers alone rule the part out as a document (a pointer, a report, a part of a
   * report), or null. Such a part is counted but never typed or stored (docs/architecture.md,
   * "Attachment selection").
   */
  exclusion: string | null;
}

/** The parts of a body a mail client shows as the message (mailparser's `textTypes`). */
const BODY_TYPES = new Set(['text/plain', 'text/html']);

/**
 * Whether a leaf is the message body or a candidate document.
 *
 * The rule is mailparser's, with one addition. mailparser treats a leaf as an attachment
 * when its type is not text/plain or text/html, or its disposition is anything but inline
 * (a missing disposition counts as inline for those two types, an unknown one as
 * attachment). Here a file name also makes a leaf a candidate: `notes.txt` sent without a
 * Content-Disposition is a file someone attached, and every client lists it as one.
 * So a body is a text/plain or text/html leaf with no `attachment` disposition and no name;
 * bodies of attached messages count as bodies too (they are that message, not a file).
 */
export function leafRole(
  declaredType: string,
  disposition: 'inline' | 'attachment' | null,
  fileName: string | null,
): 'body' | 'candidate' {
  return BODY_TYPES.has(declaredType) && disposition !== 'attachment' && fileName === null
    ? 'body'
    : 'candidate';
}

/** RFC 2183 names two dispositions; like mailparser, read any other value as `attachment`. */
export function normalizeDisposition(value: string | false): 'inline' | 'attachment' | null {
  if (value === false || value === '') return null;
  return value === 'inline' ? 'inline' : 'attachment';
}

/** `<abc@example>` → `abc@example`; an empty or missing Content-ID → null. */
export function normalizeContentId(value: string): string | null {
  const id = value.trim().replace(/^<\s*/, '').replace(/\s*>$/, '').trim();
  return id === '' ? null : id;
}

/**
 * IMAP part number (RFC 3501 6.4.5) of a leaf: mailsplit numbers the parts of one message,
 * `prefix` is the number of the message/rfc822 part that message sits in (empty at the top).
 * A message that is not multipart has the single part 1.
 */
export function partNumberOf(prefix: readonly number[], node: MimeNode): string {
  const own = (node.partNr === false ? [] : node.partNr).filter(
    (item): item is number => typeof item === 'number',
  );
  return [...prefix, ...(own.length > 0 ? own : [1])].join('.');
}

/**
 * Leaf types that are not content: a pointer to content stored elsewhere (RFC 2046 5.2.3),
 * and the machine-readable parts of reports (RFC 3464 delivery status, RFC 8098 read
 * receipts, RFC 6522 returned headers, RFC 6533 their UTF-8 forms, RFC 5965 abuse reports).
 * A client that names one (a "details.txt" delivery status) does not make it a document.
 */
const NOT_CONTENT: Readonly<Record<string, string>> = {
  'message/external-body': 'a pointer to content stored elsewhere (message/external-body), not the content',
  'message/delivery-status': 'a delivery report (message/delivery-status), not a document',
  'message/global-delivery-status': 'a delivery report (message/global-delivery-status), not a document',
  'message/disposition-notification': 'a read receipt (message/disposition-notification), not a document',
  'message/global-disposition-notification':
    'a read receipt (message/global-disposition-notification), not a document',
  'text/rfc822-headers': 'the headers of a returned message (text/rfc822-headers), not a document',
  'message/global-headers': 'the headers of a returned message (message/global-headers), not a document',
  'message/feedback-report': 'an abuse report (message/feedback-report), not a document',
};

/**
 * Every part of a report (RFC 6522 multipart/report: bounces, delay notices, read receipts,
 * abuse reports) is about a message, not a document sent to this address. Its human-readable
 * part is text a mail server or client wrote. Its returned message, when it has one, is a
 * message that went out with this address as its sender (spoofed, or an auto-reply loop):
 * a bounce of a spoofed mail would hand us someone else's invoice, and a bounce of our own
 * mail would upload the same invoice again. So the returned message is not walked into;
 * it is recorded as one skipped part.
 */
const IN_REPORT = 'part of a report (multipart/report) about another message, not a document';

/** Why a leaf's headers rule it out as a document, or null (see LeafDescription.exclusion). */
export function exclusionOf(declaredType: string, ancestorTypes: readonly string[]): string | null {
  if (ancestorTypes.includes('multipart/report')) {
    return declaredType === 'message/rfc822'
      ? 'a message returned by a report (multipart/report): its attachments are not documents sent to this address'
      : (NOT_CONTENT[declaredType] ?? IN_REPORT);
  }
  return NOT_CONTENT[declaredType] ?? null;
}

/** Read a parsed mailsplit leaf node. */
export function describeLeaf(node: MimeNode, prefix: readonly number[]): LeafDescription {
  const declaredType = node.contentType === false ? 'text/plain' : node.contentType;
  const disposition = normalizeDisposition(node.disposition);
  const fileName = readFileName(node);
  const contentId = node.headers === false ? null : normalizeContentId(node.headers.getFirst('content-id'));
  return {
    partNumber: partNumberOf(prefix, node),
    declaredType,
    disposition,
    fileName,
    contentId,
    charset: node.charset === false || node.charset.trim() === '' ? null : node.charset.trim(),
    role: leafRole(declaredType, disposition, fileName),
    exclusion: exclusionOf(declaredType, ancestorTypes(node)),
  };
}

function readFileName(node: MimeNode): string | null {
  if (node.filename === false || node.filename.trim() === '') return null;
  const headers = node.headers;
  if (headers === false) return node.filename;
  return decodeRawFileName(node.filename, [
    headers.getFirst('content-disposition'),
    headers.getFirst('content-type'),
  ]);
}

/** The content types of a node's multipart ancestors within its message, nearest first. */
function ancestorTypes(node: MimeNode): string[] {
  const types: string[] = [];
  for (let parent = node.parentNode; parent !== false; parent = parent.parentNode) {
    if (parent.contentType !== false) types.push(parent.contentType);
  }
  return types;
}
