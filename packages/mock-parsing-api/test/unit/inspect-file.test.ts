import { describe, expect, it } from 'vitest';
import { countPdfPages, hasPdfEndMarker, isZipIntact } from '../../src/inspect-file.ts';
import { pdfWithPages } from '../../src/sample-pdf.ts';
import { sampleFile } from '../support/sample-files.ts';

describe('countPdfPages', () => {
  it.each([
    { name: 'the one-page sample', bytes: sampleFile('sample.pdf'), pages: 1 },
    { name: 'a generated 3-page PDF', bytes: pdfWithPages(3), pages: 3 },
    { name: 'a generated 11-page PDF', bytes: pdfWithPages(11), pages: 11 },
    { name: 'a PDF with no pages', bytes: pdfWithPages(0), pages: 0 },
    { name: '/Type/Page without spaces', bytes: Buffer.from('<</Type/Page/Parent 2 0 R>>'), pages: 1 },
    {
      name: '/Pages and /PageLabel only',
      bytes: Buffer.from('<</Type /Pages>> <</Type /PageLabel>>'),
      pages: 0,
    },
    { name: 'a page dictionary closing right after', bytes: Buffer.from('<</Type /Page>>'), pages: 1 },
  ])('counts $pages in $name', ({ bytes, pages }) => {
    expect(countPdfPages(bytes)).toBe(pages);
  });
});

describe('hasPdfEndMarker', () => {
  it.each([
    { name: 'a whole PDF', bytes: pdfWithPages(1), expected: true },
    {
      name: 'a PDF with a comment after %%EOF',
      bytes: Buffer.concat([pdfWithPages(1), Buffer.from('%x\n')]),
      expected: true,
    },
    { name: 'a PDF cut before %%EOF', bytes: pdfWithPages(1, { endMarker: false }), expected: false },
    { name: 'a PDF cut in the middle', bytes: pdfWithPages(2).subarray(0, 120), expected: false },
    { name: 'a bare header', bytes: Buffer.from('%PDF-1.4\n'), expected: false },
  ])('is $expected for $name', ({ bytes, expected }) => {
    expect(hasPdfEndMarker(bytes)).toBe(expected);
  });
});

describe('isZipIntact', () => {
  const docx = sampleFile('sample.docx');
  const overwritten = Buffer.from(docx);
  // The first central directory header's signature, found from the end record's offset field.
  const end = docx.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  overwritten.writeUInt32LE(0, docx.readUInt32LE(end + 16));
  const misplaced = Buffer.from(docx);
  misplaced.writeUInt32LE(docx.readUInt32LE(end + 16) + 1, end + 16);

  it.each([
    { name: 'the DOCX sample', bytes: docx, expected: true },
    { name: 'the XLSX sample', bytes: sampleFile('sample.xlsx'), expected: true },
    { name: 'the ODT sample', bytes: sampleFile('sample.odt'), expected: true },
    {
      name: 'an empty zip',
      bytes: Buffer.from('504b0506000000000000000000000000000000000000', 'hex'),
      expected: false,
    },
    { name: 'a DOCX cut short', bytes: docx.subarray(0, docx.length - 30), expected: false },
    { name: 'a DOCX cut to its first half', bytes: docx.subarray(0, docx.length >> 1), expected: false },
    { name: 'a DOCX whose central directory is overwritten', bytes: overwritten, expected: false },
    { name: 'a DOCX whose end record points elsewhere', bytes: misplaced, expected: false },
    { name: 'a few bytes', bytes: Buffer.from('PK'), expected: false },
  ])('is $expected for $name', ({ bytes, expected }) => {
    expect(isZipIntact(bytes)).toBe(expected);
  });
});
