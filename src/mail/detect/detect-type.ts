import { type FileTypeResult, fileTypeFromBuffer } from 'file-type';
import { cfbDirectory } from './cfb-directory.ts';

/** The formats the parsing service takes (docs/parsing-api.md, "The file"). */
export type DocumentType =
  | 'pdf'
  | 'doc'
  | 'docx'
  | 'txt'
  | 'rtf'
  | 'html'
  | 'png'
  | 'jpg'
  | 'tiff'
  | 'odt'
  | 'xls'
  | 'xlsx';

interface TypeInfo {
  /** The MIME type sent upstream. */
  mime: string;
  /** Declared MIME types that name this format, the canonical one first. */
  declared: readonly string[];
  /** File name extensions that name it, the one given to unnamed parts first. */
  extensions: readonly string[];
}

const TYPES: Readonly<Record<DocumentType, TypeInfo>> = {
  pdf: { mime: 'application/pdf', declared: ['application/pdf'], extensions: ['pdf'] },
  doc: {
    mime: 'application/msword',
    declared: ['application/msword', 'application/vnd.ms-word'],
    extensions: ['doc'],
  },
  docx: {
    mime: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    declared: ['application/vnd.openxmlformats-officedocument.wordprocessingml.document'],
    extensions: ['docx'],
  },
  txt: { mime: 'text/plain', declared: ['text/plain'], extensions: ['txt', 'text'] },
  rtf: { mime: 'application/rtf', declared: ['application/rtf', 'text/rtf'], extensions: ['rtf'] },
  html: { mime: 'text/html', declared: ['text/html', 'application/xhtml+xml'], extensions: ['html', 'htm'] },
  png: { mime: 'image/png', declared: ['image/png'], extensions: ['png'] },
  jpg: {
    mime: 'image/jpeg',
    declared: ['image/jpeg', 'image/jpg', 'image/pjpeg'],
    extensions: ['jpg', 'jpeg'],
  },
  tiff: { mime: 'image/tiff', declared: ['image/tiff'], extensions: ['tiff', 'tif'] },
  odt: {
    mime: 'application/vnd.oasis.opendocument.text',
    declared: ['application/vnd.oasis.opendocument.text'],
    extensions: ['odt'],
  },
  xls: { mime: 'application/vnd.ms-excel', declared: ['application/vnd.ms-excel'], extensions: ['xls'] },
  xlsx: {
    mime: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    declared: ['application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'],
    extensions: ['xlsx'],
  },
};

/** file-type's `ext` for the formats it identifies completely from the bytes. */
const FROM_FILE_TYPE: Readonly<Record<string, DocumentType>> = {
  pdf: 'pdf',
  docx: 'docx',
  xlsx: 'xlsx',
  odt: 'odt',
  png: 'png',
  jpg: 'jpg',
  tif: 'tiff',
  rtf: 'rtf',
};

export interface TypeEvidence {
  /** The first decoded bytes of the part (at most a few hundred KiB). */
  head: Buffer;
  /** Lower-cased declared Content-Type without parameters. */
  declaredType: string;
  /** Decoded file name, if the part has one. */
  fileName: string | null;
  /** `head` is the whole part, so what the bytes do not show is not there (default false). */
  complete?: boolean;
}

export interface TypeFinding {
  /** The supported format, or null. */
  type: DocumentType | null;
  /** The MIME type the bytes themselves show (file-type's reading), null when they show none. */
  bytesType: string | null;
  /** The bytes show no format and read as text (see isText): why a part named neither .txt nor text/plain is skipped. */
  text: boolean;
}

/**
 * Which supported format a part is, or null for none. The bytes decide wherever they can:
 * an executable named invoice.pdf is not a PDF, and a PDF declared application/octet-stream
 * is one. Only where the bytes cannot tell (plain text, a compound file or zip whose telling
 * entries lie beyond the head) do the declared type and the file name count.
 */
export async function detectType(evidence: TypeEvidence): Promise<DocumentType | null> {
  return (await inspectType(evidence)).type;
}

/** detectType, also saying what the bytes showed, for the reason a part is skipped. */
export async function inspectType(evidence: TypeEvidence): Promise<TypeFinding> {
  if (evidence.head.length === 0) return { type: null, bytesType: null, text: false };
  const found = await fileTypeFromBuffer(evidence.head);
  return {
    type: decide(evidence, found),
    bytesType: found?.mime ?? null,
    text: found === undefined && isText(evidence.head),
  };
}

/**
 * Bytes that read as text: no C0 control byte but the ones text uses (TAB, LF, VT, FF, CR,
 * and ESC, which ISO-2022-JP shifts with). Any 8-bit charset passes: this says "text", not
 * which text, and only explains a skip; it never makes a part a document.
 */
export function isText(head: Buffer): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control bytes is the point.
  return !/[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f]/.test(head.toString('latin1'));
}

function decide(
  { head, declaredType, fileName, complete = false }: TypeEvidence,
  found: FileTypeResult | undefined,
): DocumentType | null {
  const named = namedTypes(declaredType, fileName);
  if (found === undefined || isTextFormat(found.mime)) {
    // Text has no magic number: trust the name, but only for bytes that are text at all.
    // A NUL byte means binary (or UTF-16, which mail clients do not send as attachments).
    if (head.includes(0)) return null;
    return named.find((type) => type === 'txt' || type === 'html') ?? null;
  }
  if (found.ext === 'cfb') {
    const directory = cfbDirectory(head);
    const names = directory?.names ?? [];
    if (names.includes('WordDocument')) return 'doc';
    if (names.includes('Workbook') || names.includes('Book')) return 'xls';
    // Compound files also hold Outlook items, installers and PowerPoint files, which the
    // service does not take: a directory read in full without those names is none of ours.
    // With part of it out of reach, only a name that says DOC or XLS makes it one of them.
    if (directory?.complete === true || complete) return null;
    return named.find((type) => type === 'doc' || type === 'xls') ?? null;
  }
  if (found.ext === 'zip') {
    // file-type names DOCX, XLSX and ODT from their entries. Plain `zip` for a whole part is
    // an archive; for a head, the entries may lie beyond it, so the name decides.
    if (complete) return null;
    return named.find((type) => type === 'docx' || type === 'xlsx' || type === 'odt') ?? null;
  }
  return FROM_FILE_TYPE[found.ext] ?? null;
}

/** The canonical MIME type to send upstream. */
export function documentMimeType(type: DocumentType): string {
  return TYPES[type].mime;
}

/** The usual file name extension, without the dot. */
export function documentExtension(type: DocumentType): string {
  return TYPES[type].extensions[0] ?? type;
}

/** The formats a file name extension (without the dot, any case) names: none, or one. */
export function typesNamedByExtension(extension: string): DocumentType[] {
  const lower = extension.toLowerCase();
  return (Object.keys(TYPES) as DocumentType[]).filter((type) => TYPES[type].extensions.includes(lower));
}

/** Formats the declared type names, then those the file name's extension names, in that order. */
function namedTypes(declaredType: string, fileName: string | null): DocumentType[] {
  const all = Object.keys(TYPES) as DocumentType[];
  const byDeclared = all.filter((type) => TYPES[type].declared.includes(declaredType));
  const extension = fileName === null ? null : extensionOf(fileName);
  const byExtension = extension === null ? [] : typesNamedByExtension(extension);
  return [...byDeclared, ...byExtension];
}

function extensionOf(fileName: string): string | null {
  const match = /\.([a-z0-9]{1,10})\s*$/i.exec(fileName);
  return match?.[1] === undefined ? null : match[1].toLowerCase();
}

/** file-type results that are text formats (XML, calendars, subtitles), not a binary verdict. */
function isTextFormat(mime: string): boolean {
  return mime.startsWith('text/') || mime === 'application/xml';
}
