import { Readable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { defaultLimits } from '../../../harness/mail-fixtures.ts';
import { createMemoryStore } from '../../../harness/mail-memory-store.ts';
import { pdfShowing, qpdf } from '../../../harness/qpdf.ts';
import { HEAD_BYTES, PDF_TAIL_BYTES } from '../../../src/mail/collect-leaf.ts';
import { walkMessage } from '../../../src/mail/walk-message.ts';

/** The walk tells a locked PDF while it streams, from the ends it keeps of a file larger than both. */

function message(pdf: Buffer): Buffer {
  const base64 = pdf.toString('base64').replace(/.{76}/g, '$&\r\n');
  return Buffer.from(
    [
      'From: Ann <ann@acme.example>',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="m"',
      '',
      '--m',
      'Content-Type: text/plain',
      '',
      'Attached.',
      '--m',
      'Content-Type: application/pdf; name="statement.pdf"',
      'Content-Disposition: attachment; filename="statement.pdf"',
      'Content-Transfer-Encoding: base64',
      '',
      base64,
      '--m--',
      '',
    ].join('\r\n'),
  );
}

async function walk(pdf: Buffer) {
  const store = createMemoryStore();
  // Small chunks, as a client's packets arrive: the tail is kept across thousands of them.
  const raw = message(pdf);
  const chunks = Array.from({ length: Math.ceil(raw.length / 1500) }, (_, i) =>
    raw.subarray(i * 1500, (i + 1) * 1500),
  );
  const result = await walkMessage(Readable.from(chunks), store, defaultLimits, {});
  const part = result.parts.find((leaf) => leaf.fileName === 'statement.pdf');
  return { part, stored: store.parts.get(part?.index ?? -1) };
}

describe('walkMessage: encrypted PDFs', () => {
  let large: Buffer;
  beforeAll(async () => {
    // About 1 MB of page content between the two ends the walk keeps.
    large = await pdfShowing('Invoice 1', 100_000);
    expect(large.length).toBeGreaterThan(HEAD_BYTES + PDF_TAIL_BYTES + 256 * 1024);
  });

  it.each<[string, string[], boolean]>([
    ['unencrypted', ['--compress-streams=n'], false],
    ['AES-256, classic trailer', ['--compress-streams=n', '--encrypt', 'user', 'owner', '256', '--'], true],
    [
      'AES-256, cross-reference stream',
      ['--compress-streams=n', '--object-streams=generate', '--encrypt', 'user', 'owner', '256', '--'],
      true,
    ],
    [
      'AES-256, linearized',
      ['--compress-streams=n', '--linearize', '--encrypt', 'user', 'owner', '256', '--'],
      true,
    ],
  ])(
    'a large PDF, %s (qpdf %s) → encrypted %s, stored whole either way',
    async (_case, options, encrypted) => {
      const pdf = await qpdf(large, options);
      const { part, stored } = await walk(pdf);
      expect(part?.detectedType).toBe('pdf');
      expect(part?.encrypted).toBe(encrypted);
      expect(part?.size).toBe(pdf.length);
      expect(stored?.state).toBe('ended');
      expect(stored?.bytes?.equals(pdf)).toBe(true);
    },
  );

  it('a small locked PDF, read whole in the head', async () => {
    const pdf = await qpdf(await pdfShowing('Invoice 2'), ['--encrypt', 'user', 'owner', '256', '--']);
    expect((await walk(pdf)).part?.encrypted).toBe(true);
  });
});
