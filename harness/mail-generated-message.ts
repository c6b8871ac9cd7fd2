import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';

export interface GeneratedMessage {
  /** The message, produced only as it is read. */
  stream: Readable;
  /** Bytes the stream has handed out so far. */
  bytesGiven(): number;
  /** Total size of the message in bytes. */
  readonly totalBytes: number;
  /** SHA-256 of the attachment's bytes; complete once the stream has ended. */
  attachmentSha256(): string;
}

/** Raw bytes per block: a multiple of 57, so each block is whole 76-character base64 lines. */
const BLOCK_BYTES = 57 * 1024;

export interface GeneratedOptions {
  /** Declared Content-Type of the attachment; default application/pdf. */
  contentType?: string;
  /** The attachment's first bytes (its magic number), as Latin-1; default a PDF header. */
  magic?: string;
}

/**
 * A message with one base64 attachment of `attachmentBytes` (a PDF header, or `magic`, then
 * random bytes), generated block by block as the stream is read, so neither the test nor the
 * message holds the attachment in memory.
 */
export function generatedMessage(
  attachmentBytes: number,
  fileName = 'large.pdf',
  options: GeneratedOptions = {},
): GeneratedMessage {
  const head = Buffer.from(
    [
      'From: Scanner <scanner@acme.example>',
      'To: invoices@ingest.example.com',
      'Subject: Large scan',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="generated"',
      '',
      '--generated',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'A large scan is attached.',
      '--generated',
      `Content-Type: ${options.contentType ?? 'application/pdf'}; name="${fileName}"`,
      `Content-Disposition: attachment; filename="${fileName}"`,
      'Content-Transfer-Encoding: base64',
      '',
      '',
    ].join('\r\n'),
  );
  const tail = Buffer.from('\r\n--generated--\r\n');
  const encodedBytes = Math.ceil(attachmentBytes / 3) * 4;
  const lineBreakBytes = Math.ceil(encodedBytes / 76) * 2;
  const totalBytes = head.length + encodedBytes + lineBreakBytes + tail.length;

  const hash = createHash('sha256');
  let digest = '';
  let produced = 0;
  let given = 0;
  let headSent = false;

  const stream = new Readable({
    read() {
      if (!headSent) {
        headSent = true;
        given += head.length;
        this.push(head);
        return;
      }
      if (produced >= attachmentBytes) {
        if (digest === '') {
          digest = hash.digest('hex');
          given += tail.length;
          this.push(tail);
        }
        this.push(null);
        return;
      }
      const size = Math.min(BLOCK_BYTES, attachmentBytes - produced);
      const block = randomBytes(size);
      if (produced === 0) block.write(options.magic ?? '%PDF-1.7\n', 'latin1');
      produced += size;
      hash.update(block);
      const lines = block.toString('base64').match(/.{1,76}/g) ?? [];
      const encoded = Buffer.from(`${lines.join('\r\n')}\r\n`);
      given += encoded.length;
      this.push(encoded);
    },
  });

  return {
    stream,
    bytesGiven: () => given,
    totalBytes,
    attachmentSha256: () => digest,
  };
}
