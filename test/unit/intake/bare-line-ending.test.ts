import { describe, expect, it } from 'vitest';
import { createBareLineEndingScanner, describeBareLineEnding } from '../../../src/intake/bare-line-ending.ts';

/** Feed the chunks in order; the first finding, `end` included, or null. */
function scan(chunks: readonly string[]): 'cr' | 'lf' | null {
  const scanner = createBareLineEndingScanner();
  for (const chunk of chunks) {
    const found = scanner.push(Buffer.from(chunk, 'latin1'));
    if (found !== null) return found;
  }
  return scanner.end();
}

/** The reference: the first CR not followed by LF or LF not preceded by CR, byte by byte. */
function firstBare(text: string): 'cr' | 'lf' | null {
  for (let i = 0; i < text.length; i += 1) {
    if (text[i] === '\r' && text[i + 1] !== '\n') return 'cr';
    if (text[i] === '\n' && text[i - 1] !== '\r') return 'lf';
  }
  return null;
}

describe('createBareLineEndingScanner', () => {
  it.each<[string, string[], 'cr' | 'lf' | null]>([
    ['CRLF lines', ['Subject: a\r\n\r\nbody\r\n'], null],
    ['no line ending at all', ['abc'], null],
    ['an empty chunk', ['', 'a\r\n', ''], null],
    ['a bare LF', ['a\nb\r\n'], 'lf'],
    ['a bare LF at the start', ['\nb'], 'lf'],
    ['a bare LF after a CRLF', ['a\r\n\nb'], 'lf'],
    ['a bare CR', ['a\rb\r\n'], 'cr'],
    ['a CR before CRLF', ['a\r\r\n'], 'cr'],
    ['LF CR (reversed)', ['a\n\rb'], 'lf'],
    ['<LF>.<LF>', ['hello\n.\nMAIL FROM:<x@y>\r\n'], 'lf'],
    ['<LF>.<CR><LF>', ['hello\n.\r\n'], 'lf'],
    ['<CR><LF>.<LF>', ['hello\r\n.\nMAIL'], 'lf'],
    ['<CR>.<CR>', ['hello\r.\rMAIL'], 'cr'],
    ['a CRLF split across chunks', ['a\r', '\nb\r\n'], null],
    ['CRLF split with a single-byte chunk', ['a\r', '\n', '\r', '\n'], null],
    ['a CR at a chunk end followed by another byte', ['a\r', 'b\r\n'], 'cr'],
    ['a CR at a chunk end followed by CR', ['a\r', '\r\n'], 'cr'],
    ['a CR ending the last chunk', ['a\r\nb\r'], 'cr'],
    ['an LF after a chunk that ended with CRLF', ['a\r\n', '\nb'], 'lf'],
    ['a bare LF long after many CRLF lines', ['line\r\n'.repeat(1000), 'x\ny'], 'lf'],
    // Chunk boundaries: a CR ending one chunk waits for the next chunk's first byte.
    ['CR ends a chunk, LF starts the next, lines follow', ['a\r\nb\r', '\nc\r\nd\r', '\n'], null],
    ['CR ends a chunk, the next is only its LF', ['a\r', '\n', 'b\r\n'], null],
    ['CR ends a chunk, the next starts with LF and holds a bare LF', ['a\r', '\n\nb'], 'lf'],
    ['CR ends a chunk, the next starts with LF and holds a bare CR', ['a\r', '\nb\rc'], 'cr'],
    ['CR ends a chunk, the next starts with LF then CR LF', ['a\r', '\n\r\n'], null],
    ['CR ends a chunk, an empty chunk, then its LF', ['a\r', '', '\nb'], null],
    ['CR ends a chunk, an empty chunk, then another byte', ['a\r', '', 'b'], 'cr'],
    ['a chunk of a lone CR between CRLF lines', ['a\r\n', '\r', '\nb\r\n'], null],
    ['a chunk of a lone LF with no CR before it', ['a\r\n', '\n'], 'lf'],
    ['a bare CR before a CR ending the chunk', ['a\rb\r', '\n'], 'cr'],
    ['a bare LF before a CR ending the chunk', ['a\nb\r', '\n'], 'lf'],
    ['CR LF split, then LF at the start of a later chunk', ['a\r', '\nb', '\nc'], 'lf'],
    ['LF first in a chunk after one ending in LF', ['a\r\n', '\nb'], 'lf'],
    ['bytes above 0x7f around CRLF (latin1)', ['\xff\r\n\x85\r', '\n\xe9'], null],
  ])('%s → %s', (_case, chunks, expected) => {
    expect(scan(chunks)).toBe(expected);
  });

  it('finds what a byte-by-byte reading finds, however the bytes are split into chunks', () => {
    // A fixed linear congruential sequence: the same 2,000 cases on every run.
    let seed = 7;
    const next = (below: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % below;
    };
    for (let round = 0; round < 2000; round += 1) {
      const text = Array.from({ length: 1 + next(12) }, () => ['a', '\r', '\n', '\r\n'][next(4)]).join('');
      const chunks: string[] = [];
      for (let at = 0; at < text.length; ) {
        const length = next(4);
        chunks.push(text.slice(at, at + length));
        at += length;
      }
      expect([text, scan(chunks)]).toEqual([text, firstBare(text)]);
    }
  });

  it('names what it found in the reply text', () => {
    expect(describeBareLineEnding('lf')).toBe(
      'message refused: bare LF in DATA; lines must end with CRLF (RFC 5321 2.3.8)',
    );
    expect(describeBareLineEnding('cr')).toContain('bare CR');
  });
});
