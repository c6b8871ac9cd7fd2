import { SMTPStream } from 'smtp-server/lib/smtp-stream.js';
import { describe, expect, it } from 'vitest';
import { DataUnstuffingStream } from '../../../src/smtp/data-unstuffing.ts';

/**
 * What a parser made of a byte stream: the commands it read and the content of each DATA,
 * driven as smtp-server's connection drives it (DATA switches to data mode; the command
 * parser goes on once the content has been read to its end).
 */
async function parse(parser: SMTPStream, pieces: readonly Buffer[]): Promise<string[]> {
  const seen: string[] = [];
  parser.oncommand = (command, callback) => {
    const line = command.toString('latin1');
    seen.push(`command ${JSON.stringify(line)}`);
    if (line === 'DATA') {
      const stream = parser.startDataMode();
      const content: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => content.push(chunk));
      stream.on('end', () => {
        seen.push(`data ${JSON.stringify(Buffer.concat(content).toString('latin1'))}`);
        setImmediate(() => parser.continue());
      });
    }
    callback?.();
  };
  for (const piece of pieces) {
    await new Promise<void>((resolve, reject) =>
      parser.write(piece, (err) => (err ? reject(err) : resolve())),
    );
  }
  // Let a pending end of DATA (its 'end' event, then continue()) and the commands after it run.
  for (let turn = 0; turn < 10; turn++) await new Promise((resolve) => setImmediate(resolve));
  return seen;
}

/** A small deterministic generator, so a failure names a seed that reproduces it. */
function random(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
}

/** Bytes rich in what the rules look at: dots, CR, LF, line starts. */
function body(next: () => number, length: number): string {
  const alphabet = ['.', '.', '\r', '\n', '\r\n', '\r\n.', '\r\n..', '\r\n.\r\n', 'a', 'b'];
  let text = '';
  while (text.length < length) text += alphabet[Math.floor(next() * alphabet.length)];
  return text;
}

function split(next: () => number, bytes: Buffer): Buffer[] {
  const pieces: Buffer[] = [];
  for (let at = 0; at < bytes.length; ) {
    const size = 1 + Math.floor(next() * (next() < 0.5 ? 4 : 40));
    pieces.push(bytes.subarray(at, at + size));
    at += size;
  }
  return pieces;
}

describe('DataUnstuffingStream', () => {
  it.each([
    { name: 'plain lines', input: 'DATA\r\nline one\r\nline two\r\n.\r\nNOOP\r\n' },
    { name: 'a stuffed dot', input: 'DATA\r\n..leading dot\r\nmiddle\r\n..x\r\n.\r\nQUIT\r\n' },
    { name: 'an empty message', input: 'DATA\r\n.\r\nNOOP\r\n' },
    { name: 'a dot line of its own', input: 'DATA\r\na\r\n..\r\nb\r\n.\r\n' },
    { name: 'a bare LF before a dot', input: 'DATA\r\na\n.\r\nb\n..c\r\n.\r\n' },
  ])('reads $name as smtp-server does, whole and one byte at a time', async ({ input }) => {
    const bytes = Buffer.from(input, 'latin1');
    const expected = await parse(new SMTPStream(), [bytes]);
    expect(await parse(new DataUnstuffingStream(), [bytes])).toEqual(expected);
    const bytewise = [...bytes].map((byte) => Buffer.from([byte]));
    expect(await parse(new DataUnstuffingStream(), bytewise)).toEqual(
      await parse(new SMTPStream(), bytewise),
    );
  });

  it('reads random bytes in random pieces as smtp-server does', async () => {
    for (let seed = 1; seed <= 3000; seed++) {
      const next = random(seed);
      // The second transaction's content comes in writes of its own: smtp-server drops the
      // continuation of a DATA that ends while the end of the one before is being handled.
      const first = Buffer.from(
        `DATA\r\n${body(next, Math.floor(next() * 120))}\r\n.\r\nNOOP\r\nDATA\r\n`,
        'latin1',
      );
      const second = Buffer.from(`${body(next, 40)}\r\n.\r\nNOOP\r\n`, 'latin1');
      const pieces = [...split(next, first), ...split(next, second)];
      const expected = await parse(new SMTPStream(), pieces);
      const actual = await parse(new DataUnstuffingStream(), pieces);
      if (JSON.stringify(actual) !== JSON.stringify(expected)) {
        expect({ seed, actual }).toEqual({ seed, actual: expected });
      }
    }
  });

  it('passes a chunk without a line-start dot on as the same bytes, not a copy', async () => {
    const parser = new DataUnstuffingStream();
    const chunks: Buffer[] = [];
    parser.oncommand = (_command, callback) => {
      parser.startDataMode().on('data', (chunk: Buffer) => chunks.push(chunk));
      callback?.();
    };
    await new Promise((resolve) => parser.write(Buffer.from('DATA\r\n'), resolve));
    const chunk = Buffer.from('abc\r\ndef\r\nghi');
    await new Promise((resolve) => parser.write(chunk, resolve));
    expect(chunks).toHaveLength(1);
    expect(chunks[0]?.buffer).toBe(chunk.buffer);
  });
});
