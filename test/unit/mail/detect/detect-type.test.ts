import { describe, expect, it } from 'vitest';
import { fileFixture } from '../../../../harness/mail-fixtures.ts';
import { cfbDirectory } from '../../../../src/mail/detect/cfb-directory.ts';
import {
  type DocumentType,
  detectType,
  documentExtension,
  documentMimeType,
  inspectType,
} from '../../../../src/mail/detect/detect-type.ts';

const OCTET = 'application/octet-stream';
const text = (value: string) => Buffer.from(value, 'utf8');

describe('detectType', () => {
  it.each([
    ['sample.pdf', 'pdf'],
    ['sample.doc', 'doc'],
    ['sample.docx', 'docx'],
    ['sample.rtf', 'rtf'],
    ['image.png', 'png'],
    ['image.jpg', 'jpg'],
    ['image.tiff', 'tiff'],
    ['sample.odt', 'odt'],
    ['sample.xls', 'xls'],
    ['sample.xlsx', 'xlsx'],
  ])('reads %s as %s from its bytes alone (declared octet-stream, no name)', async (file, type) => {
    expect(await detectType({ head: fileFixture(file), declaredType: OCTET, fileName: null })).toBe(type);
  });

  it.each<[string, Buffer, string, string | null, DocumentType | null]>([
    ['a PDF named and declared as a picture', fileFixture('sample.pdf'), 'image/png', 'photo.png', 'pdf'],
    ['a GIF (an image the service does not take)', fileFixture('image.gif'), 'image/gif', 'a.gif', null],
    ['a zip archive named .docx, read whole', fileFixture('archive.zip'), OCTET, 'report.docx', null],
    ['empty bytes', Buffer.alloc(0), 'application/pdf', 'empty.pdf', null],
  ])('%s → %s', async (_case, head, declaredType, fileName, type) => {
    expect(await detectType({ head, declaredType, fileName, complete: true })).toBe(type);
  });

  it('lets bytes that say "executable" win over a declared PDF', async () => {
    const exe = Buffer.concat([Buffer.from('MZ'), Buffer.alloc(126, 0x90)]);
    expect(
      await inspectType({ head: exe, declaredType: 'application/pdf', fileName: 'invoice.pdf' }),
    ).toEqual({
      type: null,
      bytesType: 'application/x-msdownload',
      text: false,
    });
  });

  it.each<[string, Buffer, string, boolean]>([
    ['UTF-8 text', Buffer.from('Rechnung März\r\n\tSumme: 12 €\f\n'), 'application/octet-stream', true],
    [
      'ISO-2022-JP text (ESC shifts)',
      Buffer.from('\x1b$B$3$s$K$A$O\x1b(B\r\n', 'latin1'),
      'application/octet-stream',
      true,
    ],
    ['Latin-1 text', Buffer.from('K\xf6ln\n', 'latin1'), 'application/octet-stream', true],
    ['bytes with a NUL', Buffer.from('abc\0def'), 'application/octet-stream', false],
    ['bytes with other controls', Buffer.from('abc\x01\x02def'), 'application/octet-stream', false],
  ])('says whether bytes of no format are text: %s → %s', async (_case, head, declaredType, text) => {
    expect(await inspectType({ head, declaredType, fileName: 'data.bin' })).toEqual({
      type: null,
      bytesType: null,
      text,
    });
  });

  it('does not call bytes of a known format text, even a text format file-type names', async () => {
    const xml = Buffer.from('<?xml version="1.0"?><a/>');
    expect((await inspectType({ head: xml, declaredType: 'application/xml', fileName: null })).text).toBe(
      false,
    );
  });

  describe('text formats, by declared type or name, when the bytes are text', () => {
    it.each<[string, string, string | null, DocumentType | null]>([
      ['Invoice 1\n', 'text/plain', null, 'txt'],
      ['Invoice 1\n', OCTET, 'notes.txt', 'txt'],
      ['Invoice 1\n', OCTET, 'NOTES.TXT', 'txt'],
      ['<p>Invoice</p>', 'text/html', null, 'html'],
      ['<p>Invoice</p>', OCTET, 'page.htm', 'html'],
      [
        '<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"/>',
        'application/xhtml+xml',
        null,
        'html',
      ],
      ['<p>Invoice</p>', 'text/html', 'notes.txt', 'html'],
      ['Invoice 1\n', OCTET, 'notes.csv', null],
      ['Invoice 1\n', 'text/csv', null, null],
      ['BEGIN:VCALENDAR\r\nVERSION:2.0\r\nEND:VCALENDAR\r\n', 'text/calendar', 'invite.ics', null],
      ['BEGIN:VCALENDAR\r\nVERSION:2.0\r\nEND:VCALENDAR\r\n', 'text/plain', 'invite.txt', 'txt'],
      ['Invoice\u0000binary', 'text/plain', 'notes.txt', null],
    ])('%j declared %s named %s → %s', async (content, declaredType, fileName, type) => {
      expect(await detectType({ head: text(content), declaredType, fileName })).toBe(type);
    });
  });

  describe('zip containers whose entries lie beyond the head', () => {
    const head = fileFixture('sample.docx').subarray(0, 100);

    it.each<[string, string | null, DocumentType | null]>([
      ['application/vnd.openxmlformats-officedocument.wordprocessingml.document', null, 'docx'],
      [OCTET, 'ledger.xlsx', 'xlsx'],
      [OCTET, 'letter.odt', 'odt'],
      ['application/zip', 'archive.zip', null],
      [OCTET, 'letter.pdf', null],
    ])('declared %s named %s → %s', async (declaredType, fileName, type) => {
      expect(await detectType({ head, declaredType, fileName })).toBe(type);
    });

    it('trusts no name once the whole part was read', async () => {
      expect(
        await detectType({ head, declaredType: OCTET, fileName: 'letter.docx', complete: true }),
      ).toBeNull();
    });
  });

  describe('compound files (DOC, XLS)', () => {
    it('reads the directory rather than the name', async () => {
      const doc = fileFixture('sample.doc');
      expect(
        await detectType({ head: doc, declaredType: 'application/vnd.ms-excel', fileName: 'x.xls' }),
      ).toBe('doc');
    });

    it('takes no compound file with another main stream (PowerPoint, Outlook) whatever its name', async () => {
      const other = Buffer.from(fileFixture('sample.doc'));
      Buffer.from('PowerPoint Document\0', 'utf16le').copy(other, 1024 + 128);
      other.writeUInt16LE(40, 1024 + 128 + 64);
      expect(
        await detectType({ head: other, declaredType: 'application/msword', fileName: 'a.doc' }),
      ).toBeNull();
    });

    it.each<[string, string | null, DocumentType | null]>([
      ['application/msword', null, 'doc'],
      [OCTET, 'ledger.xls', 'xls'],
      [OCTET, 'slides.ppt', null],
    ])(
      'falls back to the declared type or name (%s, %s) when the directory is beyond the head',
      async (declaredType, fileName, type) => {
        const headerOnly = fileFixture('sample.doc').subarray(0, 512);
        expect(await detectType({ head: headerOnly, declaredType, fileName })).toBe(type);
      },
    );
  });
});

describe('cfbDirectory', () => {
  it.each([
    ['sample.doc', ['Root Entry', 'WordDocument']],
    ['sample.xls', ['Root Entry', 'Workbook']],
  ])('lists the entries of %s', (file, names) => {
    expect(cfbDirectory(fileFixture(file))).toMatchObject({ names, complete: true });
  });

  it('says when the directory is cut off', () => {
    expect(cfbDirectory(fileFixture('sample.doc').subarray(0, 1024))).toEqual({
      names: [],
      complete: false,
      largestStream: 0,
    });
  });

  it('states the largest stream size an entry gives, which a hostile file may set beyond its own', () => {
    const sizes = Buffer.from(fileFixture('sample.doc'));
    expect(cfbDirectory(sizes)?.largestStream).toBeLessThanOrEqual(sizes.length);
    // The second entry (WordDocument) of the directory, in sector 1, claims 4 GB.
    sizes.writeUInt32LE(0xffffff00, 1024 + 128 + 120);
    expect(cfbDirectory(sizes)?.largestStream).toBe(0xffffff00);
  });

  it('is null for anything else', () => {
    expect(cfbDirectory(fileFixture('sample.pdf'))).toBeNull();
  });

  it('stops on a directory chain that loops', () => {
    const looping = Buffer.from(fileFixture('sample.doc'));
    looping.writeUInt32LE(1, 512 + 4); // the directory sector's successor is itself
    expect(cfbDirectory(looping)).toMatchObject({ names: ['Root Entry', 'WordDocument'], complete: false });
  });
});

describe('documentMimeType and documentExtension', () => {
  it.each<[DocumentType, string, string]>([
    ['pdf', 'application/pdf', 'pdf'],
    ['doc', 'application/msword', 'doc'],
    ['docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'docx'],
    ['txt', 'text/plain', 'txt'],
    ['rtf', 'application/rtf', 'rtf'],
    ['html', 'text/html', 'html'],
    ['png', 'image/png', 'png'],
    ['jpg', 'image/jpeg', 'jpg'],
    ['tiff', 'image/tiff', 'tiff'],
    ['odt', 'application/vnd.oasis.opendocument.text', 'odt'],
    ['xls', 'application/vnd.ms-excel', 'xls'],
    ['xlsx', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 'xlsx'],
  ])('%s is sent as %s, named .%s', (type, mime, extension) => {
    expect(documentMimeType(type)).toBe(mime);
    expect(documentExtension(type)).toBe(extension);
  });
});
