import { PassThrough, type Transform } from 'node:stream';
import { Decoder as QuotedPrintableDecoder } from 'libqp';
import { Base64Decoder } from './base64-decoder.ts';
import { Uudecoder } from './uudecoder.ts';

/** The names clients give uuencode as a Content-Transfer-Encoding (no RFC registers one). */
const UUENCODE = new Set(['x-uuencode', 'uuencode', 'x-uue', 'uue']);

/**
 * The decoder of a part's Content-Transfer-Encoding (lower-cased, '' when none): base64 as
 * mailsplit's decoder (libbase64) reads it (base64-decoder.ts), quoted-printable with the
 * decoder mailsplit itself uses, uuencode with uudecoder.ts, and
 * anything else (7bit, 8bit, binary, unknown) passed through as it is. The MIME walk decodes
 * a part with it as DATA arrives, and the uploader decodes the same bytes of the raw copy
 * with it again later (PartSpan): one choice of decoder, so both get the same bytes.
 */
export function transferDecoder(encoding: string): Transform {
  if (encoding === 'base64') return new Base64Decoder();
  if (encoding === 'quoted-printable') return new QuotedPrintableDecoder();
  if (UUENCODE.has(encoding)) return new Uudecoder();
  return new PassThrough();
}

/** Whether a part's transfer encoding leaves its bytes as they are (an attached message's body is then a span of its own). */
export function passesThrough(encoding: string): boolean {
  return encoding !== 'base64' && encoding !== 'quoted-printable' && !UUENCODE.has(encoding);
}
