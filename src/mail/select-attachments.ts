import { DETACHED_SIGNATURE, isEncryptedSmime } from './containers/smime-entity.ts';
import type { LeafPart } from './leaf-part.ts';
import { removeUnsafeCharacters } from './sanitize-file-name.ts';
import type { WalkResult } from './walk-message.ts';

/**
 * Why a part is not uploaded, as one of a fixed few kinds (the reason's text varies with the
 * part): what the attachments metric counts.
 */
export type SkipKind =
  | 'unsupported_type'
  | 'empty'
  | 'inline_image'
  | 'report'
  | 'pointer'
  | 'container'
  | 'oversized'
  | 'encrypted_pdf'
  | 'encrypted_smime'
  | 'signature';

export interface SkippedPart {
  part: LeafPart;
  /** Why it is not uploaded, for the message record. */
  reason: string;
  kind: SkipKind;
}

export interface Selection {
  /** Candidates to upload, in message order. */
  documents: LeafPart[];
  /** Every other candidate, with its reason. Bodies are the message itself and are not listed. */
  skipped: SkippedPart[];
}

/**
 * The longest "what was found" text, in characters. It ends up in a 550 reply, whose line
 * RFC 5321 4.5.3.1.5 caps at 512 octets with the code and the fixed text around it.
 */
const MAX_FOUND_CHARS = 300;

const IMAGE_TYPES = new Set(['png', 'jpg', 'tiff']);

/**
 * Which parts become documents (docs/architecture.md, "Attachment selection"): candidates of a
 * supported type, except images the HTML body shows by cid: (a logo, a pasted picture). A
 * referenced PDF is still a document: only pictures are part of how a body looks. Files taken out
 * of a ZIP archive (`inArchive`) and encrypted PDFs (`encrypted`) are among the documents;
 * decide() gives them only to the workspaces that set `archives: unpack` and
 * `encryptedPdf: upload`, and records an encrypted PDF no workspace takes as skipped
 * (lockedPdfSkip).
 */
export function selectAttachments(result: WalkResult): Selection {
  const documents: LeafPart[] = [];
  const skipped: SkippedPart[] = [];
  for (const part of result.parts) {
    if (part.role === 'body') continue;
    const skip = skipReason(part, result.htmlCids);
    if (skip === null) documents.push(part);
    else skipped.push({ part, ...skip });
  }
  return { documents, skipped };
}

function skipReason(part: LeafPart, htmlCids: ReadonlySet<string>): Omit<SkippedPart, 'part'> | null {
  if (part.exclusion !== null && isEncryptedSmime(part.exclusion)) {
    return { kind: 'encrypted_smime', reason: part.exclusion };
  }
  if (part.exclusion === DETACHED_SIGNATURE) return { kind: 'signature', reason: part.exclusion };
  if (part.exclusion !== null) {
    // describe-leaf.ts excludes a pointer (message/external-body) and the parts of reports.
    const kind = part.declaredType === 'message/external-body' ? 'pointer' : 'report';
    return { kind, reason: part.exclusion };
  }
  if (part.size === 0) return { kind: 'empty', reason: 'empty part' };
  // A container is never a document itself: its files are parts of their own (unpack-containers.ts).
  if (part.container !== null) return { kind: 'container', reason: part.container.outcome };
  if (isImage(part) && part.contentId !== null && htmlCids.has(part.contentId.toLowerCase())) {
    return { kind: 'inline_image', reason: 'inline image referenced by the message body' };
  }
  if (part.detectedType === null) {
    return { kind: 'unsupported_type', reason: unsupportedReason(part) };
  }
  return null;
}

/** An encrypted PDF that no admitting workspace uploads, as the record lists it. */
export function lockedPdfSkip(part: LeafPart): SkippedPart {
  return {
    part,
    kind: 'encrypted_pdf',
    reason:
      'encrypted_pdf: a password-protected PDF, which the parsing service cannot read (a workspace that sets encryptedPdf: upload takes it)',
  };
}

function unsupportedReason(part: LeafPart): string {
  if (part.bytesType !== null) return `unsupported type ${part.bytesType} (declared ${part.declaredType})`;
  // Text has no magic number, so any bytes without control characters read as text: only
  // the sender's word (type or name) says a text part is a document and not a log, a CSV
  // or a key.
  return part.textContent
    ? `unsupported type ${part.declaredType} (declared; its bytes are text, which is taken only when declared text/plain or text/html or named .txt, .text, .htm or .html)`
    : `unsupported type ${part.declaredType} (declared; its bytes match no supported format)`;
}

function isImage(part: LeafPart): boolean {
  if (part.detectedType !== null) return IMAGE_TYPES.has(part.detectedType);
  return (part.bytesType ?? part.declaredType).startsWith('image/');
}

/**
 * What the message held, for the reply to a message with no supported attachment, e.g.
 * "found 2 parts: invite.ics (text/calendar), signature.asc (application/pgp-signature)".
 * Names are shown without control or bidi characters; names, types and the whole text are
 * capped, the parts that do not fit are counted.
 */
export function describeFound(result: WalkResult): string {
  const candidates = result.parts.filter((part) => part.role === 'candidate');
  if (candidates.length === 0) return 'found no attachment, only the message text';

  const items = candidates.map((part) => {
    const name = shorten(removeUnsafeCharacters(part.fileName ?? `part ${part.partNumber}`));
    const type =
      part.size === 0
        ? 'empty'
        : part.encrypted === true
          ? 'encrypted PDF'
          : isEncryptedSmime(part.exclusion)
            ? 'encrypted S/MIME'
            : shorten(removeUnsafeCharacters(part.bytesType ?? part.declaredType));
    return `${name} (${type})`;
  });
  // Said first, so a sender of encrypted mail learns why before the list is cut short.
  const encrypted = candidates.some((part) => isEncryptedSmime(part.exclusion))
    ? 'the message is encrypted (S/MIME) and this server cannot decrypt it; '
    : '';
  let text = `${encrypted}found ${items.length} ${items.length === 1 ? 'part' : 'parts'}: ${items[0]}`;
  for (const [i, item] of items.entries()) {
    if (i === 0) continue;
    const rest = i === items.length - 1 ? '' : `, and ${items.length - i - 1} more`;
    if (text.length + 2 + item.length + rest.length > MAX_FOUND_CHARS) {
      return `${text}, and ${items.length - i} more`;
    }
    text += `, ${item}`;
  }
  return text;
}

/** One name or type in describeFound, in characters: keeps room for a few of them. */
const MAX_ITEM_CHARS = 60;

function shorten(text: string): string {
  return text.length <= MAX_ITEM_CHARS ? text : `${text.slice(0, MAX_ITEM_CHARS - 3)}...`;
}
