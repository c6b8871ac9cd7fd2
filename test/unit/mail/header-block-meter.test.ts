import { Readable, Writable } from 'node:stream';
import { Splitter } from '@zone-eu/mailsplit';
import { describe, expect, it } from 'vitest';
import { teeTo } from '../../../src/intake/tee-stream.ts';
import { createHeaderBlockMeter } from '../../../src/mail/header-block-meter.ts';
import { MAX_HEADER_BYTES } from '../../../src/mail/walk-limits.ts';

/** `text` cut into `size`-byte chunks. */
const chunks = (text: Buffer, size: number) =>
  Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.subarray(i * size, (i + 1) * size));

function meterRefuses(message: Buffer, cap: number, chunkSize: number): boolean {
  const meter = createHeaderBlockMeter(cap);
  return chunks(message, chunkSize).some((chunk) => meter.push(chunk) !== null);
}

/** Whether mailsplit, as the MIME walk configures it, refuses the message's header block. */
async function mailsplitRefuses(message: Buffer, cap: number): Promise<boolean> {
  const splitter = new Splitter({ maxHeadSize: cap });
  try {
    for await (const _ of Readable.from(chunks(message, 4096)).pipe(splitter)) {
      // drained
    }
    return false;
  } catch (err) {
    return (err as { code?: string }).code === 'EMAXLEN';
  }
}

/** A top-level header block of `lines` lines of these lengths (line ending included), then a body. */
function headerBlock(lengths: readonly number[], ending: '\r\n' | '\n' = '\r\n'): Buffer {
  const lines = lengths.map((length, i) => {
    const name = `X-${i}: `;
    return `${name}${'v'.repeat(Math.max(0, length - name.length - ending.length))}${ending}`;
  });
  return Buffer.from(`${lines.join('')}${ending}body${ending}`);
}

describe('createHeaderBlockMeter', () => {
  it.each([
    // The blank line that ends the block counts its own 2 bytes.
    ['short lines, each counted as 64', Array(100).fill(10), 6402, false],
    ['short lines, one byte past the cap', Array(100).fill(10), 6401, true],
    ['long lines by their bytes', [3000, 3000], 6002, false],
    ['long lines, one byte past the cap', [3000, 3001], 6002, true],
  ])('%s', (_name, lengths, cap, refused) => {
    const message = headerBlock(lengths);
    for (const size of [1, 7, 64, 4096, message.length]) {
      expect(meterRefuses(message, cap, size)).toBe(refused);
    }
  });

  it('refuses a line without an end once it alone passes the cap', () => {
    const meter = createHeaderBlockMeter(1000);
    expect(meter.push(Buffer.from(`Subject: ${'x'.repeat(900)}`))).toBeNull();
    expect(meter.push(Buffer.from('x'.repeat(200)))?.message).toBe(
      'a MIME header block is larger than the 1000 bytes this server reads (a line counts at least 64)',
    );
  });

  it('measures nothing after the blank line, with CRLF or a bare LF', () => {
    for (const ending of ['\r\n', '\n'] as const) {
      const meter = createHeaderBlockMeter(1000);
      expect(meter.push(headerBlock([100], ending))).toBeNull();
      expect(meter.push(Buffer.alloc(100_000, 'X-A: b\r\n'))).toBeNull();
    }
  });

  it('refuses exactly the header blocks mailsplit refuses, however the bytes are cut', async () => {
    // Random blocks around the cap: line lengths from 1 to 300, a blank line split across chunks.
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const cap = 8192;
    let refusedCount = 0;
    for (let round = 0; round < 60; round++) {
      const lengths: number[] = [];
      let cost = 0;
      while (cost < cap - 400 + random(800)) {
        const length = 8 + random(300);
        lengths.push(length);
        cost += Math.max(length, 64);
      }
      const message = headerBlock(lengths);
      const expected = await mailsplitRefuses(message, cap);
      if (expected) refusedCount += 1;
      expect(meterRefuses(message, cap, 1 + random(5000)), `round ${round}`).toBe(expected);
    }
    // Both verdicts were seen: the comparison tested something.
    expect(refusedCount).toBeGreaterThan(5);
    expect(refusedCount).toBeLessThan(55);
  });

  it('keeps a 24 MiB header block from what reads beside the walk: it gets none of it', async () => {
    const message = Buffer.concat([
      Buffer.from('From: ann@acme.example\r\n'),
      Buffer.alloc(24 * 1024 * 1024, 'X-A: b\r\n'),
      Buffer.from('\r\nbody\r\n'),
    ]);
    let received = 0;
    const branch = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        received += chunk.length;
        callback();
      },
    });
    // As mailauth's input: the refusal reaches the message's reply through the walk.
    branch.on('error', () => undefined);
    const meter = createHeaderBlockMeter(MAX_HEADER_BYTES);
    const tee = teeTo(Readable.from(chunks(message, 65_536)), branch, message.length, (chunk) =>
      meter.push(chunk),
    );
    for await (const _ of tee) {
      // the walk's side, drained
    }
    expect(branch.destroyed).toBe(true);
    // 64 KiB of 8-byte lines costs 512 KiB as the walk counts them: the first chunk is too much.
    expect(received).toBe(0);
  });
});
