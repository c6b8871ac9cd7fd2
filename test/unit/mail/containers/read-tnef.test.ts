import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { fileFixture, sha256 } from '../../../../harness/mail-fixtures.ts';
import { ContainerError } from '../../../../src/mail/containers/contained-file.ts';
import {
  type AttachmentProperties,
  readAttachmentProperties,
  readTnef,
} from '../../../../src/mail/containers/read-tnef.ts';

const container = (name: string) =>
  readFileSync(new URL(`../../../fixtures/containers/${name}`, import.meta.url));
const summary = (bytes: Buffer) =>
  readTnef(bytes, { maxEntries: 100 }).map((entry) =>
    'skip' in entry ? [entry.name, entry.skip] : [entry.name, entry.bytes.length, sha256(entry.bytes)],
  );

describe('readTnef', () => {
  it('takes the files out of a winmail.dat Outlook wrote, under their long names', () => {
    expect(summary(container('winmail-outlook.dat'))).toEqual([
      ['zappa_av1.jpg', 2937, 'bea844f30e0fcc20fad419a0d11032a6465da93c1da185a1196949955994409a'],
      ['bookmark.htm', 85805, '1e08d6e23c75ff80ac992eebc24c2943c7843b7dfee235966b37de5eb4362599'],
    ]);
  });

  it('prefers the long name (PR_ATTACH_LONG_FILENAME) to the 8.3 title', () => {
    const pdf = fileFixture('sample.pdf');
    const doc = fileFixture('sample.doc');
    expect(summary(container('winmail-pdf-doc.dat'))).toEqual([
      ['Rechnung März 2024.pdf', pdf.length, sha256(pdf)],
      ['contract.doc', doc.length, sha256(doc)],
    ]);
  });

  it('takes the bytes from PR_ATTACH_DATA_OBJ/BIN when attAttachData has none, named by long name, title or 8.3 name', () => {
    const doc = fileFixture('sample.doc');
    const pdf = fileFixture('sample.pdf');
    const html = fileFixture('sample.html');
    expect(summary(container('winmail-mapi-data.dat'))).toEqual([
      ['Vertrag Müller.doc', doc.length, sha256(doc)],
      ['INVOICE.PDF', pdf.length, sha256(pdf)],
      ['page.html', html.length, sha256(html)],
    ]);
    const [first] = readTnef(container('winmail-mapi-data.dat'), { maxEntries: 100 });
    expect(first !== undefined && 'declaredType' in first ? first.declaredType : null).toBe(
      'application/msword',
    );
  });

  it('prefers attAttachData to PR_ATTACH_DATA_BIN when it is not empty', () => {
    const inProperties = stream([variable(0x0102, 0x3701, Buffer.from('from the properties'))]);
    const tnef = (attachData: Buffer) =>
      Buffer.concat([
        u32buf(0x223e9f78),
        Buffer.from([0x34, 0x12]),
        attribute(0x00069002, Buffer.alloc(14)),
        attribute(0x0006800f, attachData),
        attribute(0x00069005, inProperties),
      ]);
    const bytesOf = (bytes: Buffer) =>
      readTnef(bytes, { maxEntries: 100 }).map((entry) => ('bytes' in entry ? entry.bytes.toString() : null));
    expect(bytesOf(tnef(Buffer.from('from attAttachData')))).toEqual(['from attAttachData']);
    expect(bytesOf(tnef(Buffer.alloc(0)))).toEqual(['from the properties']);
  });

  describe('an embedded message (PR_ATTACH_METHOD 5, a TNEF stream in PR_ATTACH_DATA_OBJ)', () => {
    // Written here after MS-OXTNEF 2.1.3.4.1 (no Outlook-written example is public): the
    // embedded message's PR_ATTACH_DATA_OBJ is IID_IMessage, then a TNEF stream of its own.
    const pdf = fileFixture('sample.pdf');
    const xlsx = fileFixture('sample.xlsx');
    const doc = fileFixture('sample.doc');
    const deepest = tnefStream('Fwd: older', [fileAttachment('old.pdf', pdf)]);
    const inner = tnefStream('Fwd: Rechnung 4711', [
      fileAttachment('Rechnung 4711.pdf', pdf),
      // The bytes only in PR_ATTACH_DATA_BIN, as Outlook writes some.
      [
        attribute(0x00069002, Buffer.alloc(14)),
        attribute(
          0x00069005,
          stream([variable(0x001f, 0x3707, utf16('Positionen.xlsx')), variable(0x0102, 0x3701, xlsx)]),
        ),
      ],
      embeddedAttachment('Fwd: older', deepest),
    ]);
    const summaryOf = (bytes: Buffer, maxEntries = 100) =>
      readTnef(bytes, { maxEntries }).map((entry) =>
        'skip' in entry
          ? [entry.within, entry.name, entry.skip]
          : [entry.within, entry.name, entry.bytes.length, sha256(entry.bytes)],
      );

    it('takes out its attachments, within the item named by its attachment title', () => {
      const outer = tnefStream('Invoice', [
        fileAttachment('contract.doc', doc),
        embeddedAttachment('Fwd: Rechnung 4711', inner),
      ]);
      expect(summaryOf(outer)).toEqual([
        [undefined, 'contract.doc', doc.length, sha256(doc)],
        ['Fwd: Rechnung 4711', 'Rechnung 4711.pdf', pdf.length, sha256(pdf)],
        ['Fwd: Rechnung 4711', 'Positionen.xlsx', xlsx.length, sha256(xlsx)],
        [
          'Fwd: Rechnung 4711',
          'Fwd: older',
          'an Outlook item inside an embedded Outlook item, not opened (containers are opened one level deep)',
        ],
      ]);
    });

    it("agrees with Debian's tnef on the fixture: the item's stream, and the files inside it", () => {
      const ours = summaryOf(container('winmail-embedded.dat'));
      expect(ours).toEqual([
        [undefined, 'contract.doc', doc.length, sha256(doc)],
        ['Fwd: Rechnung 4711', 'Rechnung 4711.pdf', pdf.length, sha256(pdf)],
        ['Fwd: Rechnung 4711', 'Positionen.xlsx', xlsx.length, sha256(xlsx)],
        [
          'Fwd: Rechnung 4711',
          'Fwd: Lieferschein',
          'an Outlook item inside an embedded Outlook item, not opened (containers are opened one level deep)',
        ],
      ]);
      // tnef writes the embedded message as it stands (IID_IMessage, then its TNEF stream) and
      // does not open it: the stream is given to tnef again, and its files compared.
      const folder = mkdtempSync(join(tmpdir(), 'tnef-embedded-'));
      try {
        execFileSync('tnef', ['--overwrite', '-C', folder, fixturePath('winmail-embedded.dat')]);
        const item = readFileSync(join(folder, 'Fwd%3A Rechnung 4711'));
        writeFileSync(join(folder, 'item.dat'), item.subarray(16));
        mkdirSync(join(folder, 'item'));
        execFileSync('tnef', ['--overwrite', '-C', join(folder, 'item'), join(folder, 'item.dat')]);
        const files = (name: string) => sha256(readFileSync(join(folder, 'item', name)));
        expect([files('Rechnung 4711.pdf'), files('Positionen.xlsx')]).toEqual([sha256(pdf), sha256(xlsx)]);
      } finally {
        rmSync(folder, { recursive: true, force: true });
      }
    });

    it("names the item by the embedded message's subject when the attachment has no name", () => {
      const outer = tnefStream('Invoice', [embeddedAttachment(null, inner)]);
      expect(summaryOf(outer).map((entry) => entry[0])).toEqual([
        'Fwd: Rechnung 4711',
        'Fwd: Rechnung 4711',
        'Fwd: Rechnung 4711',
      ]);
    });

    it('counts its attachments against maxEntries', () => {
      const outer = tnefStream('Invoice', [embeddedAttachment('Fwd: Rechnung 4711', inner)]);
      expect(() => readTnef(outer, { maxEntries: 3 })).toThrow(
        'it holds more than the 3 files this server reads',
      );
      expect(summaryOf(outer, 4)).toHaveLength(3);
    });

    it('lists one that is cut short, or holds no TNEF stream, as not opened, and keeps the rest', () => {
      const cut = tnefStream('Invoice', [
        embeddedAttachment('Fwd: cut', inner.subarray(0, inner.length - 100)),
        embeddedAttachment('Fwd: not TNEF', Buffer.from('a stream of another kind')),
        fileAttachment('contract.doc', doc),
      ]);
      expect(summaryOf(cut)).toEqual([
        [
          undefined,
          'Fwd: cut',
          'an Outlook item embedded in the TNEF container that cannot be read: it is cut short: an attribute runs past its end',
        ],
        [
          undefined,
          'Fwd: not TNEF',
          'an Outlook item embedded in the TNEF container without a TNEF stream of its own, not opened',
        ],
        [undefined, 'contract.doc', doc.length, sha256(doc)],
      ]);
    });
  });

  it("yields the bytes Debian's tnef takes out of the same streams", () => {
    for (const name of ['winmail-mapi-data.dat', 'winmail-outlook.dat', 'winmail-pdf-doc.dat']) {
      const ours = readTnef(container(name), { maxEntries: 100 }).flatMap((entry) =>
        'bytes' in entry ? [sha256(entry.bytes)] : [],
      );
      expect(ours.length).toBeGreaterThan(0);
      expect(ours.toSorted()).toEqual(tnefTool(name).toSorted());
    }
  });

  it.each([
    ['cut short anywhere', (bytes: Buffer) => bytes.subarray(0, bytes.length - 700), /cut short/],
    ['a length that runs past the end', (bytes: Buffer) => setLength(bytes, 0xfffffff0), /cut short/],
    ['not TNEF at all', () => fileFixture('sample.pdf'), /signature/],
  ])('refuses a stream %s with a ContainerError', (_case, damage, reason) => {
    const damaged = damage(Buffer.from(container('winmail-pdf-doc.dat')));
    expect(() => readTnef(damaged, { maxEntries: 100 })).toThrow(ContainerError);
    expect(() => readTnef(damaged, { maxEntries: 100 })).toThrow(reason);
  });

  it('refuses more attachments than maxEntries', () => {
    expect(() => readTnef(container('winmail-pdf-doc.dat'), { maxEntries: 1 })).toThrow(
      'it holds more than the 1 files this server reads',
    );
  });

  it('ends on every truncation of a real stream, with files or a ContainerError', () => {
    const bytes = container('winmail-outlook.dat');
    for (let cut = 0; cut < bytes.length; cut += 997) {
      try {
        readTnef(bytes.subarray(0, cut), { maxEntries: 100 });
      } catch (err) {
        expect(err).toBeInstanceOf(ContainerError);
      }
    }
  });
});

describe('readAttachmentProperties', () => {
  const none: AttachmentProperties = {
    longName: null,
    shortName: null,
    mimeTag: null,
    embeddedMessage: false,
    data: null,
  };
  const iid = Buffer.from('0b000000000000c00000000000000046', 'hex'); // IID_IStorage
  const odd = Buffer.from('odd length');

  it.each<[string, Buffer[], Partial<AttachmentProperties>]>([
    ['PR_ATTACH_DATA_BIN (PT_BINARY)', [variable(0x0102, 0x3701, odd)], { data: odd }],
    [
      'PR_ATTACH_DATA_OBJ (PT_OBJECT): the bytes after the 16-byte IID',
      [variable(0x000d, 0x3701, Buffer.concat([iid, odd]))],
      { data: odd },
    ],
    ['a PT_OBJECT value shorter than an IID', [variable(0x000d, 0x3701, Buffer.alloc(8))], {}],
    [
      'PR_ATTACH_LONG_FILENAME in PT_UNICODE, PR_ATTACH_FILENAME in PT_STRING8',
      [variable(0x001f, 0x3707, utf16('Grüße.pdf')), variable(0x001e, 0x3704, latin1('GRE~1.PDF'))],
      { longName: 'Grüße.pdf', shortName: 'GRE~1.PDF' },
    ],
    [
      'PR_ATTACH_MIME_TAG, lower-cased',
      [variable(0x001e, 0x370e, latin1('Application/PDF'))],
      { mimeTag: 'application/pdf' },
    ],
    ['PR_ATTACH_METHOD 5 (embedded message)', [fixed(0x0003, 0x3705, 5)], { embeddedMessage: true }],
    ['PR_ATTACH_METHOD 1 (by value)', [fixed(0x0003, 0x3705, 1)], {}],
    [
      'the data after a named property with a numeric name',
      [named(0x0003, 0x8233, u32buf(7)), variable(0x0102, 0x3701, odd)],
      { data: odd },
    ],
    [
      'the data after a named property with a string name',
      [named(0x0003, 'Keywords', u32buf(7)), variable(0x0102, 0x3701, odd)],
      { data: odd },
    ],
    [
      'the data after a multi-valued PT_MV_LONG and a padded PT_SHORT and PT_BOOLEAN',
      [
        Buffer.concat([tag(0x1003, 0x0e12), u32buf(3), u32buf(1), u32buf(2), u32buf(3)]),
        fixed(0x0002, 0x0e13, 1),
        fixed(0x000b, 0x0e14, 1),
        variable(0x0102, 0x3701, odd),
      ],
      { data: odd },
    ],
    [
      'a multi-valued PT_MV_BINARY before the name',
      [
        Buffer.concat([
          tag(0x1102, 0x0e15),
          u32buf(2),
          u32buf(3),
          padded(Buffer.from('abc')),
          u32buf(1),
          padded(Buffer.from('d')),
        ]),
        variable(0x001e, 0x3704, latin1('A.TXT')),
      ],
      { shortName: 'A.TXT' },
    ],
    [
      'what came before a type it does not know',
      [variable(0x001e, 0x3704, latin1('A.TXT')), fixed(0x00fb, 0x0e16, 0), variable(0x0102, 0x3701, odd)],
      { shortName: 'A.TXT' },
    ],
    [
      'what came before a value that runs past the end',
      [
        variable(0x001e, 0x3704, latin1('A.TXT')),
        Buffer.concat([tag(0x0102, 0x3701), u32buf(1), u32buf(4096), odd]),
      ],
      { shortName: 'A.TXT' },
    ],
  ])('reads %s', (_case, properties, expected) => {
    expect(readAttachmentProperties(stream(properties))).toEqual({ ...none, ...expected });
  });

  it('reads every prefix of a property stream without throwing, the data whole or not at all', () => {
    const data = Buffer.from('the bytes of the file');
    const whole = stream([
      variable(0x001f, 0x3707, utf16('a.pdf')),
      named(0x001e, 'Keywords', Buffer.concat([u32buf(1), u32buf(2), padded(Buffer.from('k\0'))])),
      variable(0x000d, 0x3701, Buffer.concat([iid, data])),
    ]);
    expect(readAttachmentProperties(whole).data).toEqual(data);
    for (let cut = 0; cut < whole.length; cut++) {
      const found = readAttachmentProperties(whole.subarray(0, cut)).data;
      expect(found === null || found.equals(data)).toBe(true);
    }
  });

  it('reads nothing from fewer than four bytes', () => {
    expect(readAttachmentProperties(Buffer.from([1, 0]))).toEqual(none);
  });
});

/** The sha256 of each file Debian's tnef (package tnef) takes out of a fixture, in a fresh folder. */
function tnefTool(name: string): string[] {
  const folder = mkdtempSync(join(tmpdir(), 'tnef-'));
  try {
    try {
      execFileSync('tnef', ['--overwrite', '-C', folder, fixturePath(name)]);
    } catch (err) {
      throw new Error(`Debian's tnef could not read ${name} (is the tnef package installed?)`, {
        cause: err,
      });
    }
    return readdirSync(folder).map((file) => {
      const bytes = readFileSync(join(folder, file));
      // tnef writes a PR_ATTACH_DATA_OBJ value as it stands, behind the object's 16-byte IID
      // (MS-OXTNEF: the value size counts the IID); the IID is not part of the file.
      return sha256(bytes.subarray(0, 16).equals(IID_ISTORAGE) ? bytes.subarray(16) : bytes);
    });
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

const IID_ISTORAGE = Buffer.from('0b000000000000c00000000000000046', 'hex');

function fixturePath(name: string): string {
  return fileURLToPath(new URL(`../../../fixtures/containers/${name}`, import.meta.url));
}

/** An attachment-level TNEF attribute: level 2, tag, length, data, checksum (the sum of the bytes). */
function attribute(tag: number, data: Buffer): Buffer {
  const head = Buffer.alloc(9);
  head.writeUInt8(2, 0);
  head.writeUInt32LE(tag, 1);
  head.writeUInt32LE(data.length, 5);
  const checksum = Buffer.alloc(2);
  checksum.writeUInt16LE(
    data.reduce((sum, byte) => (sum + byte) & 0xffff, 0),
    0,
  );
  return Buffer.concat([head, data, checksum]);
}

/** A message-level TNEF attribute (level 1). */
function messageAttribute(tag: number, data: Buffer): Buffer {
  const bytes = attribute(tag, data);
  bytes.writeUInt8(1, 0);
  return bytes;
}

/** A TNEF stream as Outlook writes one: signature, key, version, class, subject, then each attachment's attributes. */
function tnefStream(subject: string, attachments: Buffer[][]): Buffer {
  return Buffer.concat([
    u32buf(0x223e9f78),
    Buffer.from([0x34, 0x12]),
    messageAttribute(0x00089006, u32buf(0x00010000)), // attTnefVersion
    messageAttribute(0x00078008, latin1('IPM.Microsoft Mail.Note')), // attMessageClass
    messageAttribute(0x00018004, latin1(subject)), // attSubject
    ...attachments.flat(),
  ]);
}

/** A file attachment: attAttachRendData, attAttachData, and attAttachment with its long name. */
function fileAttachment(name: string, data: Buffer): Buffer[] {
  return [
    attribute(0x00069002, Buffer.alloc(14)),
    attribute(0x0006800f, data),
    attribute(0x00069005, stream([variable(0x001f, 0x3707, utf16(name))])),
  ];
}

/**
 * An embedded message: attAttachRendData, its title (Outlook writes the subject), and
 * attAttachment with PR_ATTACH_METHOD 5 and PR_ATTACH_DATA_OBJ, IID_IMessage then the stream.
 */
function embeddedAttachment(title: string | null, tnef: Buffer): Buffer[] {
  const iidMessage = Buffer.from('07030200000000c00000000000000046', 'hex');
  return [
    attribute(0x00069002, Buffer.alloc(14)),
    ...(title === null ? [] : [attribute(0x00018010, latin1(title))]),
    attribute(
      0x00069005,
      stream([fixed(0x0003, 0x3705, 5), variable(0x000d, 0x3701, Buffer.concat([iidMessage, tnef]))]),
    ),
  ];
}

/** A MAPI property stream (MS-OXTNEF 2.1.3.4): the count, then the properties. */
function stream(properties: Buffer[]): Buffer {
  return Buffer.concat([u32buf(properties.length), ...properties]);
}

function tag(type: number, id: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt16LE(type, 0);
  bytes.writeUInt16LE(id, 2);
  return bytes;
}

/** A single-valued fixed-size property of 4 bytes (shorter types padded to 4). */
function fixed(type: number, id: number, value: number): Buffer {
  return Buffer.concat([tag(type, id), u32buf(value)]);
}

/** A variable-size property: a value count of 1, the length, the bytes padded to 4. */
function variable(type: number, id: number, value: Buffer): Buffer {
  return Buffer.concat([tag(type, id), u32buf(1), u32buf(value.length), padded(value)]);
}

/**
 * A named property: its tag (id 0x8000 and up), GUID, kind (0: a number, 1: a string) and
 * name (the number, or the UTF-16 string's length and the string padded to 4), then the value.
 */
function named(type: number, name: number | string, value: Buffer): Buffer {
  const kindAndName =
    typeof name === 'number'
      ? Buffer.concat([u32buf(0), u32buf(name)])
      : Buffer.concat([u32buf(1), u32buf(utf16(name).length), padded(utf16(name))]);
  return Buffer.concat([tag(type, 0x8005), Buffer.alloc(16, 7), kindAndName, value]);
}

function u32buf(value: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32LE(value, 0);
  return bytes;
}

function padded(value: Buffer): Buffer {
  return Buffer.concat([value, Buffer.alloc((4 - (value.length % 4)) % 4)]);
}

function utf16(text: string): Buffer {
  return Buffer.from(`${text}\0`, 'utf16le');
}

function latin1(text: string): Buffer {
  return Buffer.from(`${text}\0`, 'latin1');
}

/** The first attribute's length field (after the 6-byte header, level and tag). */
function setLength(bytes: Buffer, length: number): Buffer {
  bytes.writeUInt32LE(length, 6 + 1 + 4);
  return bytes;
}
