/**
 * What the mock looks at in a file's bytes to play the service's parser: how many pages a
 * PDF has, and whether a PDF or a zip-based Office file (DOCX, XLSX, ODT) is whole enough
 * to convert. Deliberately shallow and pure: a fake needs a rule a test can aim at, not a
 * PDF or zip reader. Each rule is one a real reader also applies.
 */

/**
 * Page objects: dictionaries with `/Type /Page` (not `/Pages`, the tree's inner nodes).
 * Pages inside compressed object streams (PDF 1.5+) are not seen, so such a PDF counts
 * fewer pages; the mock's tests write plain PDFs.
 */
export function countPdfPages(bytes: Buffer): number {
  const text = bytes.toString('latin1');
  // A name ends at whitespace or a delimiter (ISO 32000-1 §7.2.2), so `/Pages` and
  // `/PageLabel` are not `/Page`.
  return text.match(/\/Type\s*\/Page(?![^\s/<>[\]()%{}])/g)?.length ?? 0;
}

/**
 * Whether a PDF ends with its end-of-file marker. ISO 32000-1 §7.5.5 puts `%%EOF` on the
 * last line; readers search for it near the end and tolerate bytes after it, so the mock
 * asks only that it occurs after the header: a PDF cut short in transfer has none.
 */
export function hasPdfEndMarker(bytes: Buffer): boolean {
  return bytes.lastIndexOf('%%EOF', undefined, 'latin1') > 4;
}

/** APPNOTE.TXT (PKWARE) §4.3.16: the end of central directory record is 22 bytes plus a comment. */
const END_RECORD_BYTES = 22;
const MAX_COMMENT_BYTES = 0xffff;
const END_SIGNATURE = 0x06054b50;
const CENTRAL_SIGNATURE = 0x02014b50;
const LOCAL_SIGNATURE = 0x04034b50;
/** §4.3.12: the fixed part of a central directory header, in bytes. */
const CENTRAL_HEADER_BYTES = 46;
/** A 32-bit field set to all ones means "see the ZIP64 record" (§4.4.1.4). */
const ZIP64_MARKER = 0xffffffff;

/**
 * Whether a zip archive's structure is whole: an end record, a central directory inside
 * the file, and each entry's local header where the directory says it is. Entry data
 * (compression, CRC) is not checked. A truncated or overwritten zip fails here, as it
 * fails in the unzip step of any Office converter.
 */
export function isZipIntact(bytes: Buffer): boolean {
  const end = findEndRecord(bytes);
  if (end === undefined) return false;
  const entries = bytes.readUInt16LE(end + 10);
  const directoryBytes = bytes.readUInt32LE(end + 12);
  const directoryOffset = bytes.readUInt32LE(end + 16);
  // ZIP64 archives are over 4 GiB or 65535 entries: nothing the mock is sent; trust them.
  if (directoryOffset === ZIP64_MARKER || directoryBytes === ZIP64_MARKER) return true;
  if (entries === 0 || directoryOffset + directoryBytes > end) return false;
  let at = directoryOffset;
  for (let entry = 0; entry < entries; entry++) {
    if (at + CENTRAL_HEADER_BYTES > end || bytes.readUInt32LE(at) !== CENTRAL_SIGNATURE) return false;
    const local = bytes.readUInt32LE(at + 42);
    if (local + 4 > directoryOffset || bytes.readUInt32LE(local) !== LOCAL_SIGNATURE) return false;
    at +=
      CENTRAL_HEADER_BYTES +
      bytes.readUInt16LE(at + 28) +
      bytes.readUInt16LE(at + 30) +
      bytes.readUInt16LE(at + 32);
  }
  return at <= end;
}

/** The offset of the end of central directory record, searched backwards past a comment. */
function findEndRecord(bytes: Buffer): number | undefined {
  const last = bytes.length - END_RECORD_BYTES;
  const first = Math.max(0, last - MAX_COMMENT_BYTES);
  for (let at = last; at >= first; at--) {
    if (bytes.readUInt32LE(at) === END_SIGNATURE) return at;
  }
  return undefined;
}
