import { describe, expect, it } from 'vitest';
import type { DocumentType } from '../../../src/mail/detect/detect-type.ts';
import { sanitizeFileName } from '../../../src/mail/sanitize-file-name.ts';

describe('sanitizeFileName', () => {
  it.each<[string, string | null, DocumentType, number, string]>([
    ['keeps a plain name', 'invoice.pdf', 'pdf', 0, 'invoice.pdf'],
    ['keeps decoded Unicode', 'Rechnung März.pdf', 'pdf', 0, 'Rechnung März.pdf'],
    [
      'replaces a lone surrogate (a UTF-16 name cut short)',
      'Rechnung\uD83D.pdf',
      'pdf',
      0,
      'Rechnung\uFFFD.pdf',
    ],
    ['composes decomposed Unicode (NFC)', 'Ma\u0308rz.pdf', 'pdf', 0, 'März.pdf'],
    ['removes a Unix path', '../../etc/passwd', 'txt', 0, 'passwd.txt'],
    ['removes a Windows path', 'C:\\Users\\ap\\invoice.pdf', 'pdf', 0, 'invoice.pdf'],
    ['removes a mixed path', '..\\../scans/a.pdf', 'pdf', 0, 'a.pdf'],
    ['removes C0 controls and DEL', 'in\u0000vo\r\nice\u007f.pdf', 'pdf', 0, 'invoice.pdf'],
    ['removes C1 controls', 'in\u0085voice\u009f.pdf', 'pdf', 0, 'invoice.pdf'],
    ['removes a bidi override', 'invoice\u202Efdp.exe', 'pdf', 0, 'invoicefdp.exe.pdf'],
    ['removes bidi isolates and marks', '\u2066a\u2069\u200e\u200fb\u061c.pdf', 'pdf', 0, 'ab.pdf'],
    ['trims', '  invoice.pdf \t', 'pdf', 0, 'invoice.pdf'],
    ['removes leading dots', '.hidden.pdf', 'pdf', 0, 'hidden.pdf'],
    ['removes trailing dots', 'invoice.pdf.', 'pdf', 0, 'invoice.pdf'],
    ['adds the extension to a name without one', 'invoice', 'pdf', 0, 'invoice.pdf'],
    ['adds the extension after one of no supported format', 'invoice.dat', 'pdf', 0, 'invoice.dat.pdf'],
    ['adds it after a dot that is part of the name', 'Invoice 2024.03', 'pdf', 0, 'Invoice 2024.03.pdf'],
    ['adds it after a text name of another kind', 'data.csv', 'txt', 0, 'data.csv.txt'],
    ['replaces an extension naming another supported format', 'test.rtf', 'png', 0, 'test.png'],
    ['replaces it in any case', 'scan.PDF', 'jpg', 0, 'scan.jpg'],
    ['keeps any extension of the type, in any case', 'photo.JPEG', 'jpg', 0, 'photo.JPEG'],
    ['keeps .htm for HTML', 'page.htm', 'html', 0, 'page.htm'],
    ['keeps .tif for TIFF', 'scan.tif', 'tiff', 0, 'scan.tif'],
    ['names a part without a name from its type and index', null, 'pdf', 0, 'attachment-1.pdf'],
    ['counts from 1', null, 'jpg', 4, 'attachment-5.jpg'],
    ['names an empty name like a missing one', '', 'docx', 2, 'attachment-3.docx'],
    ['names a name of only a path like a missing one', 'scans/', 'tiff', 0, 'attachment-1.tiff'],
    ['names ".." like a missing one', '..', 'xlsx', 1, 'attachment-2.xlsx'],
    ['names a name of only controls like a missing one', '\u202E\u0000', 'html', 0, 'attachment-1.html'],
  ])('%s: %j → %s', (_case, name, type, index, expected) => {
    expect(sanitizeFileName(name, type, index)).toBe(expected);
  });

  it.each([
    ['ASCII', 'a'.repeat(300), 'a'.repeat(196)],
    ['two-byte characters', 'ä'.repeat(300), 'ä'.repeat(98)],
    ['four-byte characters, never split', '😀'.repeat(100), '😀'.repeat(49)],
  ])('caps a long %s name at 200 UTF-8 bytes, keeping the extension', (_case, stem, kept) => {
    const name = sanitizeFileName(`${stem}.pdf`, 'pdf', 0);
    expect(name).toBe(`${kept}.pdf`);
    expect(Buffer.byteLength(name)).toBeLessThanOrEqual(200);
  });

  it('cuts a long name whose "extension" is itself long as a whole', () => {
    const name = sanitizeFileName(`report.${'x'.repeat(300)}`, 'pdf', 0);
    expect(Buffer.byteLength(name)).toBe(200);
    expect(name.startsWith('report.xxx')).toBe(true);
  });
});
