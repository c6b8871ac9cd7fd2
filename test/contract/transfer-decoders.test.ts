import { decode, Decoder as Libbase64Decoder } from 'libbase64';
import { Decoder as QuotedPrintableDecoder } from 'libqp';
import { describe, expect, it } from 'vitest';
import { declaredVersion, EXACT_VERSION, installedManifest } from '../../harness/pinned-version.ts';
import { Base64Decoder } from '../../src/mail/decoders/base64-decoder.ts';

/**
 * The transfer decoders the MIME walk and the uploader share (src/mail/decoders/,
 * docs/overrides.md, "libbase64" and "libqp"). A document is stored as its span of the raw
 * copy and decoded again when it is uploaded, perhaps by another process after an upgrade, and
 * its bytes must still match the SHA-256 taken while DATA streamed: so the decoders are pinned,
 * and their output on a table of inputs is fixed here. Base64Decoder replaces libbase64's
 * Decoder and must give its bytes; test/unit/mail/decoders/base64-decoder.test.ts compares the
 * two on thousands of random inputs in random pieces.
 */

async function decodeWith(decoder: NodeJS.ReadWriteStream, chunks: readonly string[]): Promise<Buffer> {
  const output: Buffer[] = [];
  const reading = (async () => {
    for await (const chunk of decoder as AsyncIterable<Buffer>) output.push(Buffer.from(chunk));
  })();
  for (const chunk of chunks) decoder.write(Buffer.from(chunk, 'latin1'));
  decoder.end();
  await reading;
  return Buffer.concat(output);
}

/** Base64 as mail carries it and as broken senders write it, and the bytes libbase64 1.4.1 gives. */
const BASE64_TABLE: ReadonlyArray<{ name: string; chunks: string[]; hex: string }> = [
  { name: 'lines of 76 with CRLF', chunks: ['QUJDREVG\r\nR0hJ\r\n'], hex: '414243444546474849' },
  { name: 'a quartet cut across writes', chunks: ['QU', 'JD', 'RA=='], hex: '41424344' },
  { name: 'bare LF and CR line ends', chunks: ['QUJD\nREVG\rR0hJ'], hex: '414243444546474849' },
  { name: 'padding in the middle', chunks: ['QQ==QQ=='], hex: '4141' },
  { name: 'URL-safe characters, dropped', chunks: ['QUJD-_RA'], hex: '41424344' },
  { name: 'stray spaces, tabs and 8-bit bytes', chunks: ['QU JD\t\u00e9RA'], hex: '41424344' },
  { name: 'a trailing part quartet', chunks: ['QUJDRA'], hex: '41424344' },
  { name: 'one character', chunks: ['Q'], hex: '' },
  { name: 'nothing', chunks: [''], hex: '' },
];

/** Quoted-printable, and the bytes libqp 3.0.1 gives. */
const QP_TABLE: ReadonlyArray<{ name: string; chunks: string[]; hex: string }> = [
  { name: 'an encoded equals sign and a soft line break', chunks: ['a=3Db=\r\nc'], hex: '613d6263' },
  { name: 'UTF-8 bytes', chunks: ['=C3=A9t=C3=A9'], hex: 'c3a974c3a9' },
  { name: 'an escape cut across writes', chunks: ['x=C', '3=A9'], hex: '78c3a9' },
  { name: 'a soft break cut across writes', chunks: ['ab=', '\r\ncd'], hex: '61626364' },
  { name: 'lower-case hex', chunks: ['=c3=a9'], hex: 'c3a9' },
  { name: 'hard line breaks kept', chunks: ['one\r\ntwo'], hex: '6f6e650d0a74776f' },
];

describe('libbase64 and libqp, the transfer decoders a stored span is decoded with again', () => {
  it.each(['libbase64', 'libqp'])('%s is installed at the exact version package.json pins', (name) => {
    expect(declaredVersion(name)).toMatch(EXACT_VERSION);
    expect(installedManifest(name).version).toBe(declaredVersion(name));
  });

  it('libbase64 still exports the decode() Base64Decoder falls back on', () => {
    expect(decode('QUJD').toString()).toBe('ABC');
  });

  it.each(BASE64_TABLE)(
    'base64, $name: libbase64 and Base64Decoder give the same bytes',
    async ({ chunks, hex }) => {
      const expected = await decodeWith(new Libbase64Decoder(), chunks);
      expect(expected.toString('hex')).toBe(hex);
      expect((await decodeWith(new Base64Decoder(), chunks)).toString('hex')).toBe(hex);
    },
  );

  it.each(QP_TABLE)('quoted-printable, $name', async ({ chunks, hex }) => {
    expect((await decodeWith(new QuotedPrintableDecoder(), chunks)).toString('hex')).toBe(hex);
  });
});
