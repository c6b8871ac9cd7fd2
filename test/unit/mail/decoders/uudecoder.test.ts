import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { describe, expect, it } from 'vitest';
import { decodeLine, Uudecoder } from '../../../../src/mail/decoders/uudecoder.ts';

/** Feed `input` in pieces of `pieceBytes` and collect what the decoder gives. */
async function decode(
  input: Buffer,
  pieceBytes = input.length,
): Promise<{ bytes: Buffer; fileName: string | null }> {
  const pieces: Buffer[] = [];
  for (let at = 0; at < input.length; at += pieceBytes) pieces.push(input.subarray(at, at + pieceBytes));
  const decoder = new Uudecoder();
  const bytes = await buffer(Readable.from(pieces).pipe(decoder));
  return { bytes, fileName: decoder.fileName };
}

/** uuencode(1)'s output, written here as the historical algorithm writes it. */
function uuencode(bytes: Buffer, name: string, zero = '`'): string {
  const char = (value: number) => (value === 0 ? zero : String.fromCharCode(value + 0x20));
  const lines = [`begin 644 ${name}`];
  for (let at = 0; at < bytes.length; at += 45) {
    const chunk = bytes.subarray(at, at + 45);
    let line = char(chunk.length);
    for (let i = 0; i < chunk.length; i += 3) {
      const [a = 0, b = 0, c = 0] = chunk.subarray(i, i + 3);
      line +=
        char(a >> 2) + char(((a & 3) << 4) | (b >> 4)) + char(((b & 15) << 2) | (c >> 6)) + char(c & 63);
    }
    lines.push(line);
  }
  lines.push(zero, 'end', '');
  return lines.join('\r\n');
}

describe('Uudecoder', () => {
  // The vectors of CPython's test_email (test_get_decoded_uu_payload, test_binary_uuencode_payload).
  it.each([
    ['begin 666 -\n+:&5L;&\\@=V]R;&0 \n \nend\n', 'hello world'],
    ["begin 666 -\n)9F]OYI:'8F%R\n \nend\n", 'foo\u6587bar'],
  ])("decodes CPython's vector %j", async (input, expected) => {
    const { bytes, fileName } = await decode(Buffer.from(input, 'latin1'));
    expect(bytes.toString('utf8')).toBe(expected);
    expect(fileName).toBe('-');
  });

  it.each([1, 2, 7, 61, 62, 4096])(
    'gives the same bytes however the input is cut (%i-byte pieces)',
    async (piece) => {
      const original = randomBytes(10_000);
      const { bytes, fileName } = await decode(Buffer.from(uuencode(original, 'scan 1.pdf')), piece);
      expect(bytes.equals(original)).toBe(true);
      expect(fileName).toBe('scan 1.pdf');
    },
  );

  it('reads spaces or backquotes for zero, and lines whose trailing spaces were dropped', async () => {
    const original = Buffer.alloc(100, 0);
    original.write('abc', 50);
    const spaces = uuencode(original, 'a', ' ');
    const trimmed = spaces
      .split('\r\n')
      .map((line) => line.trimEnd())
      .join('\r\n');
    expect((await decode(Buffer.from(spaces))).bytes.equals(original)).toBe(true);
    expect((await decode(Buffer.from(trimmed))).bytes.equals(original)).toBe(true);
    expect((await decode(Buffer.from(uuencode(original, 'a', '`')))).bytes.equals(original)).toBe(true);
  });

  it('ignores what stands before `begin` and after `end`', async () => {
    const original = Buffer.from('Invoice 1\n');
    const input = `A note.\r\nbegin-less line\r\n${uuencode(original, 'note.txt')}M1111 not data\r\n`;
    const { bytes } = await decode(Buffer.from(input));
    expect(bytes.equals(original)).toBe(true);
  });

  it('gives nothing for input without a begin line, and no name for a begin line without one', async () => {
    expect((await decode(Buffer.from('just text\r\nM\r\n'))).bytes.length).toBe(0);
    const { bytes, fileName } = await decode(Buffer.from('begin 644\r\n#86)C\r\n`\r\nend\r\n'));
    expect(bytes.toString()).toBe('abc');
    expect(fileName).toBeNull();
  });

  it('reads the last line without a line break', async () => {
    expect((await decode(Buffer.from('begin 644 x\n#86)C'))).bytes.toString()).toBe('abc');
  });
});

describe('decodeLine', () => {
  it.each<[string, string | null]>([
    ['#86)C', 'abc'],
    ['"86)C', 'ab'],
    ['!80``', 'a'],
    ['`', null],
    [' ', null],
    ['', ''],
  ])('%j → %j', (line, expected) => {
    const decoded = decodeLine(line);
    expect(decoded === null ? null : decoded.toString('latin1')).toBe(expected);
  });
});
