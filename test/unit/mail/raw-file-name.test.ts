import { describe, expect, it } from 'vitest';
import { decodeRawFileName, readsAsUtf8 } from '../../../src/mail/raw-file-name.ts';

const utf8 = (text: string) => Buffer.from(text, 'utf8');
const latin1 = (text: string) => Buffer.from(text, 'latin1');
/** How mailsplit shows bytes it read as Latin-1. */
const asLatin1 = (bytes: Buffer) => bytes.toString('latin1');

describe('readsAsUtf8', () => {
  it.each<[string, Buffer, boolean]>([
    ['ASCII only (nothing to decide)', utf8('invoice.pdf'), false],
    ['valid UTF-8', utf8('Rechnung März.pdf'), true],
    [
      'UTF-8 with one bad byte beside one sequence (1 = 1)',
      Buffer.concat([utf8('März'), latin1('\xff')]),
      true,
    ],
    ['UTF-8 cut mid-character at the end', utf8('Übersicht März').subarray(0, -2), true],
    ['more stray bytes than sequences', Buffer.concat([utf8('ä'), latin1('\xff\xfe')]), false],
    ['Latin-1 letters between ASCII', latin1('Köln Übersicht.pdf'), false],
    ['Latin-1 letter then a sign (a well-formed sequence by chance)', latin1('Ã©'), true],
    ['an overlong form is not a sequence', latin1('\xc0\xaf'), false],
    ['a surrogate is not a sequence', latin1('\xed\xa0\x80'), false],
    ['above U+10FFFF is not a sequence', latin1('\xf4\x90\x80\x80'), false],
    ['four-byte sequences count', utf8('😀.pdf'), true],
  ])('%s → %s', (_case, bytes, expected) => {
    expect(readsAsUtf8(bytes)).toBe(expected);
  });
});

describe('decodeRawFileName', () => {
  const header = (name: string) => [`attachment; filename="${name}"`, 'application/pdf'];

  it.each<[string, string, string]>([
    [
      'UTF-8 with one invalid byte: only that byte replaced',
      asLatin1(Buffer.concat([utf8('Rechnung März'), latin1('\xff.pdf')])),
      'Rechnung März\ufffd.pdf',
    ],
    [
      'valid UTF-8 read as Latin-1 (a bad byte elsewhere in the line)',
      asLatin1(utf8('Übersicht.pdf')),
      'Übersicht.pdf',
    ],
    ['Latin-1 stays Latin-1', asLatin1(latin1('Köln Übersicht.pdf')), 'Köln Übersicht.pdf'],
    ['ASCII stays as it is', 'invoice.pdf', 'invoice.pdf'],
  ])('%s', (_case, name, expected) => {
    expect(decodeRawFileName(name, header(name))).toBe(expected);
  });

  it('keeps a name that mailsplit already read as UTF-8 (characters above U+00FF)', () => {
    expect(decodeRawFileName('Счет.pdf', header('Счет.pdf'))).toBe('Счет.pdf');
  });

  it('keeps a name decoded from RFC 2231 or RFC 2047, which does not stand in its header as it is', () => {
    const mojibake = asLatin1(utf8('März.pdf'));
    expect(decodeRawFileName(mojibake, ["attachment; filename*=iso-8859-1''M%C3%A4rz.pdf"])).toBe(mojibake);
  });
});
