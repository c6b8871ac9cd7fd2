import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The benchmark's messages: a short text part and one PDF attachment, written as the file
 * `smtp-source -F` sends (LF line endings; it sends CRLF). The PDF is valid (catalog, one
 * page, a stream object, a correct xref table) and its bulk is random bytes, as a scanned
 * document's image data is: runs of one byte would flatter every stage that copies, hashes
 * or decodes.
 */

/** A PDF of about `size` bytes whose one stream holds random bytes. */
export function randomPdf(size: number): Buffer {
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>',
  ];
  // What the fixed parts take, so the whole file comes out at about `size`.
  const overhead = 400;
  const filler = randomBytes(Math.max(16, size - overhead));
  const chunks: Buffer[] = [Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  let length = chunks[0]?.length ?? 0;
  const offsets: number[] = [];
  const push = (chunk: Buffer) => {
    chunks.push(chunk);
    length += chunk.length;
  };
  objects.forEach((object, index) => {
    offsets.push(length);
    push(Buffer.from(`${index + 1} 0 obj\n${object}\nendobj\n`, 'latin1'));
  });
  offsets.push(length);
  push(Buffer.from(`4 0 obj\n<< /Length ${filler.length} >>\nstream\n`, 'latin1'));
  push(filler);
  push(Buffer.from('\nendstream\nendobj\n', 'latin1'));
  const xref = length;
  let trailer = `xref\n0 ${offsets.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) trailer += `${String(offset).padStart(10, '0')} 00000 n \n`;
  trailer += `trailer\n<< /Size ${offsets.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  push(Buffer.from(trailer, 'latin1'));
  return Buffer.concat(chunks);
}

/** Base64 in lines of 76 characters (RFC 2045 6.8), LF-ended. */
function base64Lines(bytes: Buffer): string {
  const text = bytes.toString('base64');
  const lines: string[] = [];
  for (let at = 0; at < text.length; at += 76) lines.push(text.slice(at, at + 76));
  return lines.join('\n');
}

export interface BenchMessage {
  /** The message as `smtp-source -F` reads it: LF line endings, no leading dots to stuff. */
  readonly file: Buffer;
  /** Bytes on the wire for one message: CRLF line endings, the final dot not counted. */
  readonly wireBytes: number;
}

/** One message carrying a `size`-byte PDF; `label` names it (and the file differs every call). */
export function pdfMessage(size: number, label: string): BenchMessage {
  const boundary = `bench-${randomBytes(8).toString('hex')}`;
  const text = [
    'From: Bench Sender <bench@acme.example>',
    'To: documents@ingest.test',
    `Subject: bench ${label}`,
    `Message-ID: <${randomBytes(12).toString('hex')}@acme.example>`,
    'Date: Mon, 1 Jun 2026 09:00:00 +0000',
    'MIME-Version: 1.0',
    `Content-Type: multipart/mixed; boundary="${boundary}"`,
    '',
    `--${boundary}`,
    'Content-Type: text/plain; charset=utf-8',
    '',
    'The attached document, for the benchmark.',
    '',
    `--${boundary}`,
    `Content-Type: application/pdf; name="${label}.pdf"`,
    `Content-Disposition: attachment; filename="${label}.pdf"`,
    'Content-Transfer-Encoding: base64',
    '',
    base64Lines(randomPdf(size)),
    `--${boundary}--`,
    '',
  ].join('\n');
  const file = Buffer.from(text, 'latin1');
  const lines = text.split('\n').length - 1;
  return { file, wireBytes: file.length + lines };
}

/** Writes a fresh message (new random bytes) to `dir`; its path and bytes on the wire. */
export async function writeMessageFile(
  dir: string,
  size: number,
  label: string,
): Promise<{ path: string; wireBytes: number }> {
  const message = pdfMessage(size, label);
  const path = join(dir, `${label}.eml`);
  await writeFile(path, message.file);
  return { path, wireBytes: message.wireBytes };
}
