import { type ContainedEntry, ContainerError, type ContainerLimits } from './contained-file.ts';

/**
 * The attachments inside a TNEF stream (MS-OXTNEF), the `winmail.dat` Outlook sends to
 * recipients its address book marks as "rich text".
 *
 * Read here rather than with a package: the one npm TNEF reader (node-tnef) copies the bytes
 * into an array of numbers (8 bytes of heap per byte), logs to stdout, and does not take an
 * attachment's bytes from its MAPI properties (PR_ATTACH_DATA_BIN/OBJ), where Outlook puts
 * some. The format is a flat
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
const ATT_SUBJECT = 0x8004; // the message's subject, in the OEM code page
const LEVEL_MESSAGE = 0x01;
const LEVEL_ATTACHMENT = 0x02;

// MAPI property ids and types (MS-OXPROPS, MS-OXCDATA 2.11.1).
/** PR_ATTACH_DATA_BIN (PT_BINARY) or PR_ATTACH_DATA_OBJ (PT_OBJECT): the bytes, when attAttachData has none. */
const PR_ATTACH_DATA = 0x3701;
const PR_ATTACH_FILENAME = 0x3704; // the 8.3 name
const PR_ATTACH_LONG_FILENAME = 0x3707;
const PR_ATTACH_MIME_TAG = 0x370e;
const PR_ATTACH_METHOD = 0x3705;
/** PR_ATTACH_METHOD value: the attachment is an embedded message, not a file. */
const ATTACH_EMBEDDED_MSG = 5;
const PT_STRING8 = 0x001e;
const PT_UNICODE = 0x001f;
const PT_BINARY = 0x0102;
const PT_OBJECT = 0x000d;
/** A PT_OBJECT value starts with the IID of the interface it was written through (MS-OXTNEF 2.1.3.4.1). */
const IID_SIZE = 16;
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
  /** attAttachTitle. */
  title: string | null;
  /** attAttachData. */
  data: Buffer | null;
  /** The attachment's MAPI properties (attAttachment). */
  properties: AttachmentProperties;
}

/** What the MAPI properties of one attachment (attAttachment) say of it. */
export interface AttachmentProperties {
  /** PR_ATTACH_LONG_FILENAME. */
  longName: string | null;
  /** PR_ATTACH_FILENAME, the 8.3 name. */
  shortName: string | null;
  /** PR_ATTACH_MIME_TAG, lower-cased. */
  mimeTag: string | null;
  /** PR_ATTACH_METHOD is ATTACH_EMBEDDED_MSG. */
  embeddedMessage: boolean;
  /** PR_ATTACH_DATA_BIN, or PR_ATTACH_DATA_OBJ without its IID. */
  data: Buffer | null;
}

/** Whether `bytes` start as a TNEF stream. */
export function isTnef(bytes: Buffer): boolean {
  return bytes.length >= 4 && bytes.readUInt32LE(0) === TNEF_SIGNATURE;
}

/**
 * Every attachment of the stream, in order. An embedded message (an Outlook item attached
 * inside the TNEF, PR_ATTACH_METHOD 5) is opened like an attached Outlook item: its own
 * attachments are listed, `within` it; one deeper is listed as not opened. Throws
 * ContainerError for a stream that is not TNEF, is cut short, or holds more attachments than
 * `limits.maxEntries`, embedded ones counted.
 */
export function readTnef(bytes: Buffer, limits: Pick<ContainerLimits, 'maxEntries'>): ContainedEntry[] {
  const budget = { left: limits.maxEntries, max: limits.maxEntries };
  const stream = readStream(bytes, budget);
  return stream.attachments.flatMap((attachment) => entries(attachment, budget));
}

/** What one TNEF stream holds: its subject and its attachments. */
interface TnefStream {
  /** attSubject, the message's subject. */
  subject: string | null;
  attachments: Attachment[];
}

/** Attachments beyond the container's bound, embedded ones counted: the container is not read. */
class TooManyEntries extends ContainerError {}

function readStream(bytes: Buffer, budget: { left: number; max: number }): TnefStream {
  if (!isTnef(bytes)) throw new ContainerError('it does not start with the TNEF signature');
  const attachments: Attachment[] = [];
  let subject: string | null = null;
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
    if (level === LEVEL_MESSAGE && id === ATT_SUBJECT) subject = cString(data.toString('latin1'));
    if (level !== LEVEL_ATTACHMENT) continue;
    if (id === ATT_ATTACH_REND_DATA) {
      if (budget.left === 0) {
        throw new TooManyEntries(`it holds more than the ${budget.max} files this server reads`);
      }
      budget.left -= 1;
      attachments.push({ title: null, data: null, properties: readAttachmentProperties(Buffer.alloc(0)) });
      continue;
    }
    const current = attachments.at(-1);
    if (current === undefined) continue;
    if (id === ATT_ATTACH_TITLE) current.title = cString(data.toString('latin1'));
    else if (id === ATT_ATTACH_DATA) current.data = data;
    else if (id === ATT_ATTACHMENT) current.properties = readAttachmentProperties(data);
  }
  return { subject, attachments };
}

/**
 * One attachment as files. Outlook puts the bytes in attAttachData or, for some attachments,
 * only in the MAPI properties (PR_ATTACH_DATA_BIN/OBJ); the name in PR_ATTACH_LONG_FILENAME,
 * attAttachTitle or PR_ATTACH_FILENAME. The first that is there and not empty is taken. An
 * embedded message's PR_ATTACH_DATA_OBJ holds a TNEF stream of its own (MS-OXTNEF 2.1.3.4.1,
 * behind IID_IMessage): at the top level its attachments are taken out, named `within` it.
 */
function entries(
  attachment: Attachment,
  budget: { left: number; max: number },
  within?: string,
): ContainedEntry[] {
  const { title, data: attachData, properties } = attachment;
  const name = properties.longName ?? title ?? properties.shortName;
  const data = attachData !== null && attachData.length > 0 ? attachData : (properties.data ?? attachData);
  const place = within === undefined ? {} : { within };
  if (properties.embeddedMessage) {
    const size = data?.length ?? 0;
    if (within !== undefined) {
      return [
        {
          name,
          ...place,
          size,
          skip: 'an Outlook item inside an embedded Outlook item, not opened (containers are opened one level deep)',
        },
      ];
    }
    // The stream is in PR_ATTACH_DATA_OBJ; taken from attAttachData should a writer put it there.
    const embedded = [properties.data, attachData].find((each) => each !== null && isTnef(each)) ?? null;
    if (embedded === null) {
      return [
        {
          name,
          size,
          skip: 'an Outlook item embedded in the TNEF container without a TNEF stream of its own, not opened',
        },
      ];
    }
    let inner: TnefStream;
    try {
      inner = readStream(embedded, budget);
    } catch (err) {
      if (err instanceof TooManyEntries || !(err instanceof ContainerError)) throw err;
      return [
        {
          name,
          size,
          skip: `an Outlook item embedded in the TNEF container that cannot be read: ${err.message}`,
        },
      ];
    }
    const item = name ?? inner.subject ?? 'embedded message';
    return inner.attachments.flatMap((each) => entries(each, budget, item));
  }
  if (data === null) return [{ name, ...place, size: 0, skip: 'an attachment without data' }];
  return [{ name, ...place, declaredType: properties.mimeTag, bytes: data }];
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
 * The properties of attAttachment (MS-OXTNEF 2.1.3.4) that name the file and hold its bytes, as
 * far as they can be read: reading stops at a type it does not know or a value that runs past
 * the end, keeping what came before.
 */
export function readAttachmentProperties(data: Buffer): AttachmentProperties {
  const found: AttachmentProperties = {
    longName: null,
    shortName: null,
    mimeTag: null,
    embeddedMessage: false,
    data: null,
  };
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
    const text = type === PT_UNICODE || type === PT_STRING8;
    const decoded = () => cString(first.toString(type === PT_UNICODE ? 'utf16le' : 'latin1'));
    if (id === PR_ATTACH_LONG_FILENAME && text) found.longName = decoded();
    else if (id === PR_ATTACH_FILENAME && text) found.shortName = decoded();
    else if (id === PR_ATTACH_MIME_TAG && text) found.mimeTag = decoded()?.toLowerCase() ?? null;
    else if (id === PR_ATTACH_DATA && type === PT_BINARY) found.data = first;
    else if (id === PR_ATTACH_DATA && type === PT_OBJECT && first.length >= IID_SIZE) {
      found.data = first.subarray(IID_SIZE);
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
