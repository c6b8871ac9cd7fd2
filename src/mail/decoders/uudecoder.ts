import { Transform, type TransformCallback } from 'node:stream';

/**
 * A streaming decoder of uuencoded data (the `begin MODE NAME` ... `end` format of uuencode(1),
 * POSIX.1-2017 "uuencode", historical algorithm), for parts sent with
 * `Content-Transfer-Encoding: x-uuencode` (docs/architecture.md, "Attachment selection").
 *
 * No well-kept npm package decodes it as a stream: mailsplit and libmime know base64 and
 * quoted-printable only, mailparser and postal-mime none; `uue` and `uuencode` decode whole
 * strings held in memory (and the latter is not open source). So it is done here, a line at
 * a time, holding at most one partial line.
 *
 * Lines before `begin` are ignored (clients put a note there); after the zero-length line or
 * `end`, the rest is. A data line's first character gives its byte count; encoders that drop
 * trailing spaces shorten the line, so missing characters count as spaces (zero bits).
 */
export class Uudecoder extends Transform {
  /** The name on the `begin` line, once it was read; null before, or when it had none. */
  fileName: string | null = null;
  private state: 'before' | 'data' | 'done' = 'before';
  private partial: Buffer = Buffer.alloc(0);

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    const input = this.partial.length === 0 ? chunk : Buffer.concat([this.partial, chunk]);
    let start = 0;
    for (let end = input.indexOf(0x0a); end !== -1; end = input.indexOf(0x0a, start)) {
      this.line(input.subarray(start, end));
      start = end + 1;
    }
    // A line longer than any encoder writes (61 characters) is not uuencode: stop holding it.
    this.partial = input.length - start > MAX_LINE ? Buffer.alloc(0) : Buffer.from(input.subarray(start));
    callback();
  }

  override _flush(callback: TransformCallback): void {
    if (this.partial.length > 0) this.line(this.partial);
    this.partial = Buffer.alloc(0);
    callback();
  }

  private line(raw: Buffer): void {
    if (this.state === 'done') return;
    const text = raw.toString('latin1').replace(/\r$/, '');
    if (this.state === 'before') {
      const begin = BEGIN.exec(text);
      if (begin === null) return;
      this.fileName = begin[1]?.trim() || null;
      this.state = 'data';
      return;
    }
    if (text.trimEnd() === 'end') {
      this.state = 'done';
      return;
    }
    const decoded = decodeLine(text);
    if (decoded === null) this.state = 'done';
    else if (decoded.length > 0) this.push(decoded);
  }
}

/** `begin 644 invoice.pdf`: the mode is octal (three or four digits), the name the rest of the line. */
const BEGIN = /^begin\s+[0-7]{3,4}(?:\s+(.*))?$/;

/** The longest line held while looking for its end, in bytes; encoders write 61 characters and a line break. */
const MAX_LINE = 1024;

/** The 6-bit value of one uuencoded character: both ` ` and `` ` `` stand for 0. */
function sextet(text: string, at: number): number {
  const code = text.charCodeAt(at);
  return Number.isNaN(code) ? 0 : (code - 0x20) & 0x3f;
}

/** One data line's bytes; null for the zero-length line that ends the data. */
export function decodeLine(text: string): Buffer | null {
  if (text.length === 0) return Buffer.alloc(0);
  const count = sextet(text, 0);
  if (count === 0) return null;
  const out = Buffer.alloc(Math.ceil(count / 3) * 3);
  for (let group = 0; group * 3 < count; group += 1) {
    const at = 1 + group * 4;
    const a = sextet(text, at);
    const b = sextet(text, at + 1);
    const c = sextet(text, at + 2);
    const d = sextet(text, at + 3);
    out[group * 3] = (a << 2) | (b >> 4);
    out[group * 3 + 1] = ((b & 0x0f) << 4) | (c >> 2);
    out[group * 3 + 2] = ((c & 0x03) << 6) | d;
  }
  return out.subarray(0, count);
}
