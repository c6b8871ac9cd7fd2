import { type DocumentType, documentExtension, typesNamedByExtension } from './detect/detect-type.ts';

/**
 * The longest name sent upstream, in UTF-8 bytes. File systems cap a name at 255 bytes;
 * 200 leaves room for the suffixes other tools add (" (1)", ".part") and stays readable
 * in the service's UI.
 */
const MAX_NAME_BYTES = 200;

/** The longest tail kept as the extension when a long name is cut, in UTF-8 bytes. */
const MAX_EXTENSION_BYTES = 16;

/**
 * Characters removed from names: C0 controls, DEL, C1 controls, and the bidi controls that
 * make "invoice\u202Efdp.exe" display as "invoiceexe.pdf" (embeddings and overrides
 * U+202A-U+202E, isolates U+2066-U+2069, the LRM/RLM marks U+200E/U+200F and the Arabic
 * letter mark U+061C).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: removing control characters is the point.
const UNWANTED = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * The name a document is sent upstream with (docs/architecture.md, "File names"): the decoded name
 * with any path removed (`/` and `\`, so `../../etc/passwd` becomes `passwd`), control and
 * bidi characters removed, trimmed, without leading dots (no hidden files, no `..`) or trailing ones, and
 * at most MAX_NAME_BYTES long with its extension kept. The service reads a document's kind
 * from its name as well as its bytes, so the extension is made to say the detected type
 * (withExtensionOf). A part without a usable name is called `attachment-<index+1>.<ext>`.
 */
export function sanitizeFileName(name: string | null, type: DocumentType, index: number): string {
  const extension = documentExtension(type);
  const fallback = `attachment-${index + 1}.${extension}`;
  if (name === null) return fallback;

  const lastSegment = name.normalize('NFC').split(/[/\\]/).pop() ?? '';
  // Trailing dots and spaces go too: Windows drops them, so "invoice.pdf." would not name a PDF.
  const cleaned = removeUnsafeCharacters(lastSegment)
    .replace(/^[.\s]+/, '')
    .replace(/[.\s]+$/, '');
  if (cleaned === '') return fallback;

  return capLength(withExtensionOf(cleaned, type));
}

/**
 * `name` with an extension that names `type`: kept when it does already (any of the type's
 * extensions, any case: `scan.JPEG`), replaced when it names another supported format (PNG
 * bytes named `test.rtf` become `test.png`: the name was wrong), and otherwise added, since
 * what looks like an extension may be part of the name (`Invoice 2024.03` becomes
 * `Invoice 2024.03.pdf`, `data.csv` sent as text `data.csv.txt`).
 */
function withExtensionOf(name: string, type: DocumentType): string {
  const extension = documentExtension(type);
  if (!hasExtension(name)) return `${name}.${extension}`;
  const dot = name.lastIndexOf('.');
  const named = typesNamedByExtension(name.slice(dot + 1));
  if (named.includes(type)) return name;
  return named.length > 0 ? `${name.slice(0, dot)}.${extension}` : `${name}.${extension}`;
}

/** `text` without control and bidi characters, for names shown anywhere (a reply, a log line). */
export function removeUnsafeCharacters(text: string): string {
  // A name decoded from UTF-16 (TNEF, Outlook items) can hold a lone surrogate, which no
  // header or URL encoding can carry: it becomes U+FFFD like any other undecodable byte.
  return text.toWellFormed().replace(UNWANTED, '');
}

function hasExtension(name: string): boolean {
  const dot = name.lastIndexOf('.');
  return dot > 0 && dot < name.length - 1;
}

/** Cut the stem, never the extension, to fit MAX_NAME_BYTES; never split a character. */
function capLength(name: string): string {
  if (Buffer.byteLength(name) <= MAX_NAME_BYTES) return name;
  const dot = name.lastIndexOf('.');
  const tail = dot > 0 ? name.slice(dot) : '';
  const extension = Buffer.byteLength(tail) <= MAX_EXTENSION_BYTES ? tail : '';
  const stem = extension === '' ? name : name.slice(0, dot);
  return `${truncateUtf8(stem, MAX_NAME_BYTES - Buffer.byteLength(extension)).trimEnd()}${extension}`;
}

function truncateUtf8(text: string, maxBytes: number): string {
  let bytes = 0;
  let out = '';
  // for..of walks code points, so a surrogate pair is kept or dropped whole.
  for (const char of text) {
    bytes += Buffer.byteLength(char);
    if (bytes > maxBytes) break;
    out += char;
  }
  return out;
}
