/**
 * The two ends of a streamed file: what the walk keeps of a PDF while its bytes pass on to the
 * store. Offsets in the file map to `head` from 0 and to `tail` from `tailStart`.
 */
export interface FileEnds {
  /** The file's first bytes. */
  head: Buffer;
  /** The file's last bytes. */
  tail: Buffer;
  /** Where `tail` starts in the file. */
  tailStart: number;
}

const STARTXREF = Buffer.from('startxref', 'latin1');
const TRAILER = Buffer.from('trailer', 'latin1');
const STREAM = Buffer.from('stream', 'latin1');
const ENDOBJ = Buffer.from('endobj', 'latin1');

/**
 * How far a cross-reference section's dictionary is looked for past where the section starts,
 * in bytes: a classic table lists 20 bytes per object before its trailer, so 64 KiB covers
 * the first-page table of a linearized file with some 3,000 objects on its first page.
 */
const SECTION_BYTES = 64 * 1024;

/** The `/Encrypt` key as a whole name: a name ends at white space or a delimiter (ISO 32000-1, 7.2.2). */
const ENCRYPT_KEY = /\/Encrypt(?=[\s()<>[\]{}/%]|$)/;
const CLASSIC_SECTION = /^\s*xref\b/;
const STREAM_SECTION = /^\s*\d+\s+\d+\s+obj\b/;
const OFFSET = /^\s*(\d{1,15})\b/;

/**
 * Whether a PDF is encrypted (password-protected), from its two ends alone (docs/architecture.md,
 * "Encrypted PDFs"). An encrypted PDF names its encryption dictionary in every trailer: the
 * `trailer` dictionary of a classic cross-reference table, or the dictionary of a
 * cross-reference stream (PDF 1.5). Two of them are read, never the document's content, so
 * the text "/Encrypt" on a page or in an image counts for nothing:
 *
 * - the trailer right before the last `startxref`, at the end of the file;
 * - the section `startxref` points to. In a linearized file that is the first-page section
 *   near the start, whose trailer is the full one (the last trailer there holds only /Size).
 *
 * A section found in neither end (a cross-reference stream far from both ends of a large file)
 * cannot be read here, and the file counts as not encrypted: the service then reports it.
 */
export function isEncryptedPdf(ends: FileEnds): boolean {
  const { tail } = ends;
  const last = tail.lastIndexOf(STARTXREF);
  if (last < 0) return false;
  if (namesEncrypt(trailerBefore(tail, last))) return true;
  const offset = OFFSET.exec(latin1(tail.subarray(last + STARTXREF.length, last + STARTXREF.length + 32)));
  if (offset?.[1] === undefined) return false;
  const section = bytesFrom(Number(offset[1]), ends);
  return section !== null && namesEncrypt(sectionDictionary(section));
}

/** The dictionary of a `trailer` that ends right at `end`, or null when the bytes before it are an object. */
function trailerBefore(tail: Buffer, end: number): Buffer | null {
  const start = tail.lastIndexOf(TRAILER, end);
  if (start < 0) return null;
  const dictionary = tail.subarray(start + TRAILER.length, end);
  // An `endobj` between them: this `trailer` is older than the object that ends the file.
  return dictionary.includes(ENDOBJ) ? null : dictionary;
}

/** The bytes from `offset` on, as far as one end of the file holds them (at most SECTION_BYTES). */
function bytesFrom(offset: number, { head, tail, tailStart }: FileEnds): Buffer | null {
  if (offset >= tailStart && offset < tailStart + tail.length) {
    return tail.subarray(offset - tailStart, offset - tailStart + SECTION_BYTES);
  }
  if (offset < head.length) return head.subarray(offset, offset + SECTION_BYTES);
  return null;
}

/** The dictionary of the cross-reference section `section` starts with: its trailer, or the stream's own. */
function sectionDictionary(section: Buffer): Buffer | null {
  const opening = latin1(section.subarray(0, 64));
  if (CLASSIC_SECTION.test(opening)) {
    const start = section.indexOf(TRAILER);
    if (start < 0) return null;
    const end = section.indexOf(STARTXREF, start);
    return section.subarray(start + TRAILER.length, end < 0 ? section.length : end);
  }
  const object = STREAM_SECTION.exec(opening);
  if (object === null) return null;
  const end = section.indexOf(STREAM, object[0].length);
  return end < 0 ? null : section.subarray(object[0].length, end);
}

function namesEncrypt(dictionary: Buffer | null): boolean {
  return dictionary !== null && ENCRYPT_KEY.test(latin1(dictionary));
}

function latin1(bytes: Buffer): string {
  return bytes.toString('latin1');
}
