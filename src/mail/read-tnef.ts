import { type ContainedEntry, ContainerError, type ContainerLimits } from './contained-file.ts';

/**
 * The attachments inside a TNEF stream (MS-OXTNEF), the `winmail.dat` Outlook sends to
 * recipients its address book marks as "rich text".
 *
 * Read here rather than with a package: the one npm TNEF reader (node-tnef) copies the bytes
 * into an array of numbers (8 bytes of heap per byte) and logs to stdout. The format is a flat
 * list of attributes, each bounded by a length that is checked against what is there, so
 * every loop below ends with the bytes.
 */

/** MS-OXTNEF 2.1.3.1: the stream's first four bytes, little-endian. */
export const TNEF_SIGNATURE = 0x223e9f78;

// Attribute ids (MS-OXTNEF 2.1.3.3), the low 16 bits of the 32-bit tag.
const ATT_ATTACH_REND_DATA = 0x9002; // starts each attachment
const ATT_ATTACH_TITLE = 0x8010; // its short (8.3) name, in the OEM code page
const ATT_ATTACH_DATA = 0x800f; // its bytes
const ATT_ATTACHMENT = 0x9005; // its MAPI properties (the long name, the MIME type, the method)
const LEVEL_ATTACHMENT = 0x02;

// MAPI property ids and types (MS-OXPROPS, MS-OXCDATA 2.11.1).
const PR_ATTACH_LONG_FILENAME = 0x3707;
const PR_ATTACH_MIME_TAG = 0x370e;
const PR_ATTACH_METHOD = 0x3705;
/** PR_ATTACH_METHOD value: the attachment is an embedded message, not a file. */
const ATTACH_EMBEDDED_MSG = 5;
const PT_STRING8 = 0x001e;
const PT_UNICODE = 0x001f;
const PT_BINARY = 0x0102;
const PT_OBJECT = 0x000d;
const MV_FLAG = 0x1000;
/** Bytes of one value of each fixed-size type as TNEF writes it (padded to 4). */
const FIXED_SIZES: Readonly<Record<number, number>> = {
  1: 4, // PT_NULL
  2: 4, // PT_SHORT, padded
  3: 4, // PT_LONG
  4: 4, // PT_FLOAT
  5: 8, // PT_DOUBLE
  6: 8, // PT_CURRENCY
  7: 8, // PT_APPTIME
  10: 4, // PT_ERROR
  11: 4, // PT_BOOLEAN, padded
  20: 8, // PT_I8
  64: 8, // PT_SYSTIME
  72: 16, // PT_CLSID
};

interface Attachment {
  title: string | null;
  longName: string | null;
  mimeTag: string | null;
  embeddedMessage: boolean;
  data: Buffer | null;
}

/** Whether `bytes` start as a TNEF stream. */
export function isTnef(bytes: Buffer): boolean {
  return bytes.length >= 4 && bytes.readUInt32LE(0) === TNEF_SIGNATURE;
}

/**
 * Every attachment of the stream, in order; an embedded message (an Outlook item attached
 * inside the TNEF) is listed as not opened. Throws ContainerError for a stream that is not
 * TNEF, is cut short, or holds more attachments than `limits.maxEntries`.
 */
export function readTnef(bytes: Buffer, limits: Pick<ContainerLimits, 'maxEntries'>): ContainedEntry[] {
  if (!isTnef(bytes)) throw new ContainerError('it does not start with the TNEF signature');
  const attachments: Attachment[] = [];
  // Signature (4 bytes) and legacy key (2 bytes), then attributes.
  let at = 6;
  while (at < bytes.length) {
    // level (1), tag (4), length (4), data (length), checksum (2). Checksums are not checked:
    // a wrong one says nothing a length check does not, and the tnef tool ignores them too.
    if (at + 9 > bytes.length) throw truncated();
    const level = bytes.readUInt8(at);
    const id = bytes.readUInt32LE(at + 1) & 0xffff;
    const length = bytes.readUInt32LE(at + 5);
    const start = at + 9;
    const end = start + length;
    if (end + 2 > bytes.length) throw truncated();
    const data = bytes.subarray(start, end);
    at = end + 2;
    if (level !== LEVEL_ATTACHMENT) continue;
    if (id === ATT_ATTACH_REND_DATA) {
      if (attachments.length >= limits.maxEntries) {
        throw new ContainerError(`it holds more than the ${limits.maxEntries} files this server reads`);
      }
      attachments.push({ title: null, longName: null, mimeTag: null, embeddedMessage: false, data: null });
      continue;
    }
    const current = attachments.at(-1);
    if (current === undefined) continue;
    if (id === ATT_ATTACH_TITLE) current.title = cString(data.toString('latin1'));
    else if (id === ATT_ATTACH_DATA) current.data = data;
    else if (id === ATT_ATTACHMENT) Object.assign(current, readAttachmentProperties(data));
  }
  return attachments.map((attachment) => {
    const name = attachment.longName ?? attachment.title;
    if (attachment.embeddedMessage) {
      return {
        name,
        size: attachment.data?.length ?? 0,
        skip: 'an Outlook item embedded in the TNEF container, not opened (containers are opened one level deep)',
      };
    }
    if (attachment.data === null) return { name, size: 0, skip: 'an attachment without data' };
    return { name, declaredType: attachment.mimeTag, bytes: attachment.data };
  });
}

function truncated(): ContainerError {
  return new ContainerError('it is cut short: an attribute runs past its end');
}

/** A string as TNEF stores it, NUL-terminated and padded; null when empty. */
function cString(text: string): string | null {
  const cut = text.indexOf('\0');
  const value = (cut === -1 ? text : text.slice(0, cut)).trim();
  return value === '' ? null : value;
}

/**
 * The properties of attAttachment (MS-OXTNEF 2.1.3.4) that name the file, as far as they can
 * be read: reading stops at a type it does not know, keeping what came before.
 */
function readAttachmentProperties(data: Buffer): Partial<Attachment> {
  const found: Partial<Attachment> = {};
  if (data.length < 4) return found;
  const count = data.readUInt32LE(0);
  let at = 4;
  // Every property takes at least 8 bytes, so the count cannot make the loop outrun the data.
  for (let i = 0; i < count && at + 4 <= data.length; i++) {
    const type = data.readUInt16LE(at);
    const id = data.readUInt16LE(at + 2);
    at += 4;
    if (id >= 0x8000) {
      // A named property: GUID, then a number or a name.
      if (at + 20 > data.length) return found;
      const kind = data.readUInt32LE(at + 16);
      at += 20;
      if (kind === 0) at += 4;
      else {
        if (at + 4 > data.length) return found;
        at += 4 + pad4(data.readUInt32LE(at));
      }
    }
    const values = readValues(data, at, type);
    if (values === null) return found;
    at = values.next;
    const first = values.items[0];
    if (first === undefined) continue;
    if (id === PR_ATTACH_LONG_FILENAME && (type === PT_UNICODE || type === PT_STRING8)) {
      found.longName = cString(first.toString(type === PT_UNICODE ? 'utf16le' : 'latin1'));
    } else if (id === PR_ATTACH_MIME_TAG && (type === PT_UNICODE || type === PT_STRING8)) {
      found.mimeTag =
        cString(first.toString(type === PT_UNICODE ? 'utf16le' : 'latin1'))?.toLowerCase() ?? null;
    } else if (id === PR_ATTACH_METHOD && first.length >= 4) {
      found.embeddedMessage = first.readUInt32LE(0) === ATTACH_EMBEDDED_MSG;
    }
  }
  return found;
}

/** The values of one property starting at `at`, or null when the type is unknown or they run past the end. */
function readValues(data: Buffer, at: number, type: number): { items: Buffer[]; next: number } | null {
  const base = type & ~MV_FLAG;
  const variable = base === PT_STRING8 || base === PT_UNICODE || base === PT_BINARY || base === PT_OBJECT;
  const fixed = FIXED_SIZES[base];
  if (!variable && fixed === undefined) return null;
  let count = 1;
  // Variable-size values always carry a count; fixed-size ones only when multi-valued.
  if (variable || (type & MV_FLAG) !== 0) {
    if (at + 4 > data.length) return null;
    count = data.readUInt32LE(at);
    at += 4;
  }
  const items: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    let size = fixed ?? 0;
    if (variable) {
      if (at + 4 > data.length) return null;
      size = data.readUInt32LE(at);
      at += 4;
    }
    if (at + size > data.length) return null;
    items.push(data.subarray(at, at + size));
    at += pad4(size);
  }
  return { items, next: at };
}

function pad4(size: number): number {
  return Math.ceil(size / 4) * 4;
}
