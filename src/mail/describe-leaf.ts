import type { MimeNode } from '@zone-eu/mailsplit';

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
  role: 'body' | 'candidate';
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

/** Read a parsed mailsplit leaf node. */
export function describeLeaf(node: MimeNode, prefix: readonly number[]): LeafDescription {
  const declaredType = node.contentType === false ? 'text/plain' : node.contentType;
  const disposition = normalizeDisposition(node.disposition);
  const fileName = node.filename === false || node.filename.trim() === '' ? null : node.filename;
  const contentId = node.headers === false ? null : normalizeContentId(node.headers.getFirst('content-id'));
  return {
    partNumber: partNumberOf(prefix, node),
    declaredType,
    disposition,
    fileName,
    contentId,
    role: leafRole(declaredType, disposition, fileName),
  };
}
