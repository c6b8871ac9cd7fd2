import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ContainerError } from '../../../src/mail/contained-file.ts';
import { readTnef } from '../../../src/mail/read-tnef.ts';
import { fileFixture, sha256 } from '../../support/mail-fixtures.ts';

const container = (name: string) =>
  readFileSync(new URL(`../../fixtures/containers/${name}`, import.meta.url));
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

/** The first attribute's length field (after the 6-byte header, level and tag). */
function setLength(bytes: Buffer, length: number): Buffer {
  bytes.writeUInt32LE(length, 6 + 1 + 4);
  return bytes;
}
