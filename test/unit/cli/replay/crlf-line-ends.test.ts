import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { describe, expect, it } from 'vitest';
import { crlfLineEnds } from '../../../../src/cli/replay/crlf-line-ends.ts';

async function converted(chunks: readonly string[]): Promise<string> {
  const input = Readable.from(chunks.map((chunk) => Buffer.from(chunk, 'latin1')));
  return (await buffer(input.pipe(crlfLineEnds()))).toString('latin1');
}

describe('crlfLineEnds', () => {
  it.each([
    { name: 'LF line ends', chunks: ['a\nb\n'], out: 'a\r\nb\r\n' },
    { name: 'CRLF kept as it is', chunks: ['a\r\nb\r\n'], out: 'a\r\nb\r\n' },
    { name: 'mixed', chunks: ['a\r\nb\nc'], out: 'a\r\nb\r\nc' },
    { name: 'a CRLF split between chunks', chunks: ['a\r', '\nb'], out: 'a\r\nb' },
    { name: 'an LF first in a chunk after a letter', chunks: ['a', '\nb'], out: 'a\r\nb' },
    { name: 'empty lines', chunks: ['\n\n'], out: '\r\n\r\n' },
    { name: 'a bare CR passed on', chunks: ['a\rb'], out: 'a\rb' },
    { name: 'empty chunks', chunks: ['', 'a\n', ''], out: 'a\r\n' },
  ])('$name', async ({ chunks, out }) => {
    expect(await converted(chunks)).toBe(out);
  });
});
