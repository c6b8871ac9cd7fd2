import type { LeafPart } from './leaf-part.ts';
import { removeUnsafeCharacters, sanitizeFileName } from './sanitize-file-name.ts';
import type { WalkResult } from './walk-message.ts';

/** The message body as a document, for a workspace that sets bodyAsDocument. */
export interface BodyDocument {
  /** The body leaf; `stored` false means it was over smtp.maxPartSize (collect-body.ts). */
  part: LeafPart;
  type: 'html' | 'txt';
  /** The name it is sent upstream with, from the subject. */
  fileName: string;
}

/** The name of a body document whose message has no subject (or one of only unsafe characters). */
const NAMELESS = 'message';

/**
 * Which body of the message is its document: the HTML body of the top-level message, else its
 * text body, the first non-empty one of each (a client that splits a body around inline
 * pictures writes several; the first holds the greeting and usually the whole text). Bodies
 * of attached messages are that message's, not this one's. Null when the message has no
 * non-empty body.
 */
export function findBodyDocument(walk: WalkResult): BodyDocument | null {
  const bodies = walk.parts.filter((part) => part.role === 'body' && part.depth === 0 && part.size > 0);
  const html = bodies.find((part) => part.declaredType === 'text/html');
  const part = html ?? bodies.find((part) => part.declaredType === 'text/plain');
  if (part === undefined) return null;
  const type = part === html ? 'html' : 'txt';
  return { part, type, fileName: bodyDocumentName(walk.subject, type) };
}

/**
 * `Invoice 2024/117` → `Invoice 2024-117.html`. A subject is a title, not a path: its slashes
 * become hyphens instead of cutting the name (as they do in an attachment's name), and the
 * extension is always added (`Fwd: invoice.pdf` is `Fwd: invoice.pdf.html`, an HTML page).
 * Otherwise the rules of attachment names apply (sanitize-file-name.ts): no control or bidi
 * characters, no leading dots, at most 200 bytes with the extension kept.
 */
export function bodyDocumentName(subject: string | null, type: 'html' | 'txt'): string {
  const title = removeUnsafeCharacters(subject ?? '')
    .replace(/[/\\]/g, '-')
    .replace(/^[.\s]+/, '')
    .replace(/[.\s]+$/, '');
  return sanitizeFileName(`${title === '' ? NAMELESS : title}.${type}`, type, 0);
}
