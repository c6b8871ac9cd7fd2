import { readdirSync, readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { defaultLimits, fileFixture, sha256 } from '../../../harness/mail-fixtures.ts';
import { createMemoryStore } from '../../../harness/mail-memory-store.ts';
import { transferDecoder } from '../../../src/mail/decoders/transfer-decoder.ts';
import type { PartSpan } from '../../../src/mail/part-store.ts';
import { walkMessage } from '../../../src/mail/walk-message.ts';

/**
 * A walk over the raw copy (spansOfRaw) writes no document part: it records where each one
 * lies in the raw bytes. These tests decode every span from the raw message, as the uploader
 * does, and hold the bytes to the walk's own SHA-256 and to the bytes a walk without spans
 * stores, over every fixture message and messages built to move the boundaries around.
 */

const fixtures = new URL('../../fixtures/mail/', import.meta.url);
const fixtureMessages = readdirSync(fixtures)
  .filter((name) => name.endsWith('.eml'))
  .map((name) => [name, readFileSync(new URL(name, fixtures))] as const);

async function decodeSpan(raw: Buffer, span: PartSpan): Promise<Buffer> {
  const decoder = transferDecoder(span.encoding);
  const decoded: Buffer[] = [];
  decoder.on('data', (chunk: Buffer) => decoded.push(chunk));
  const ended = new Promise((resolve, reject) => decoder.on('end', resolve).on('error', reject));
  decoder.end(raw.subarray(span.start, span.end));
  await ended;
  return Buffer.concat(decoded);
}

function chunked(raw: Buffer, size: number): Readable {
  const chunks: Buffer[] = [];
  for (let at = 0; at < raw.length; at += size) chunks.push(raw.subarray(at, at + size));
  return Readable.from(chunks);
}

/** Walk `raw` with and without spans; every document of the first is checked against the second. */
async function expectSpansMatch(raw: Buffer, chunkSize: number): Promise<Array<string | null>> {
  const plain = createMemoryStore();
  const stored = await walkMessage(chunked(raw, chunkSize), plain, defaultLimits);
  const spanned = createMemoryStore();
  const result = await walkMessage(chunked(raw, chunkSize), spanned, defaultLimits, { spansOfRaw: true });
  expect(result.parts.map((part) => [part.index, part.sha256, part.stored])).toEqual(
    stored.parts.map((part) => [part.index, part.sha256, part.stored]),
  );
  const checked: Array<string | null> = [];
  for (const part of result.parts.filter((candidate) => candidate.stored)) {
    const span = spanned.spans.get(part.index);
    const expected = plain.parts.get(part.index)?.bytes;
    if (span === undefined) {
      // Not a span of the raw copy: written as before (a container, or inside an encoded message).
      expect(spanned.parts.get(part.index)?.bytes).toEqual(expected);
      continue;
    }
    expect(spanned.parts.has(part.index)).toBe(false);
    const decoded = await decodeSpan(raw, span);
    expect(sha256(decoded)).toBe(part.sha256);
    expect(decoded).toEqual(expected);
    checked.push(part.fileName);
  }
  return checked;
}

function crlf(text: string): Buffer {
  return Buffer.from(text.replace(/\r?\n/g, '\r\n'), 'latin1');
}

const pdf = fileFixture('sample.pdf');
const base64Lines = (bytes: Buffer) => bytes.toString('base64').replace(/.{76}/g, '$&\n');

/** A message that carries a message/rfc822 whose own body is encoded: its parts are no span. */
const encodedForward = crlf(`From: a@example.com
To: b@example.com
Subject: forwarded, encoded
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="outer"

--outer
Content-Type: text/plain

See attached.
--outer
Content-Type: message/rfc822
Content-Transfer-Encoding: base64

${base64Lines(
  crlf(`From: c@example.com
Subject: inner
MIME-Version: 1.0
Content-Type: application/pdf; name="inner.pdf"
Content-Transfer-Encoding: base64

${base64Lines(pdf)}
`),
)}
--outer--
`);

/** Empty parts, quoted-printable text, a 7bit forward with a PDF, uuencode, LF and CRLF mixed in parts. */
const assorted = crlf(`From: a@example.com
To: b@example.com
Subject: assorted
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="b1"

preamble
--b1
Content-Type: application/pdf; name="empty.pdf"
Content-Transfer-Encoding: base64

--b1
Content-Type: text/plain; name="notes.txt"
Content-Disposition: attachment; filename="notes.txt"
Content-Transfer-Encoding: quoted-printable

Line one with a soft=
 break and =C3=A9 and a long one ${'x'.repeat(200)}
--b1
Content-Type: message/rfc822

From: c@example.com
Subject: inner
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="b2"

--b2
Content-Type: application/pdf; name="inner.pdf"
Content-Transfer-Encoding: base64

${base64Lines(pdf)}
--b2--
--b1
Content-Type: application/octet-stream; name="scan.pdf"
Content-Transfer-Encoding: x-uuencode

begin 644 scan.pdf
${uuencode(pdf)}\`
end
--b1--
epilogue
`);

function uuencode(bytes: Buffer): string {
  const lines: string[] = [];
  for (let at = 0; at < bytes.length; at += 45) {
    const line = bytes.subarray(at, at + 45);
    let text = String.fromCharCode(32 + line.length);
    for (let i = 0; i < line.length; i += 3) {
      const [a = 0, b = 0, c = 0] = [line[i], line[i + 1], line[i + 2]];
      for (const six of [a >> 2, ((a & 3) << 4) | (b >> 4), ((b & 15) << 2) | (c >> 6), c & 63])
        text += six === 0 ? '`' : String.fromCharCode(32 + six);
    }
    lines.push(text);
  }
  return lines.join('\n');
}

describe('walkMessage with spansOfRaw: documents are located in the raw copy, not written', () => {
  it.each(fixtureMessages)('%s: every span decodes to the bytes and hash of its part', async (_name, raw) => {
    const whole = await expectSpansMatch(raw, raw.length);
    for (const size of [4096, 97]) expect(await expectSpansMatch(raw, size)).toEqual(whole);
  });

  it('finds the spans of an assorted message in chunks of any size, LF or CRLF', async () => {
    const lf = Buffer.from(assorted.toString('latin1').replace(/\r\n/g, '\n'), 'latin1');
    for (const message of [assorted, lf]) {
      for (const size of [message.length, 8192, 1000, 61, 7]) {
        // empty.pdf is empty, so no document: nothing to store
        expect(await expectSpansMatch(message, size)).toEqual(['notes.txt', 'inner.pdf', 'scan.pdf']);
      }
    }
  });

  it('writes the parts of an attached message whose body is base64: they are no span of the raw copy', async () => {
    const spanned = createMemoryStore();
    const result = await walkMessage(Readable.from([encodedForward]), spanned, defaultLimits, {
      spansOfRaw: true,
    });
    const inner = result.parts.find((part) => part.fileName === 'inner.pdf');
    expect(inner?.stored).toBe(true);
    expect(spanned.spans.size).toBe(0);
    expect(spanned.parts.get(inner?.index ?? -1)?.bytes).toEqual(pdf);
    await expectSpansMatch(encodedForward, 4096);
  });
});
