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
  ])('%s → %s', (_case, chunks, expected) => {
    expect(scan(chunks)).toBe(expected);
  });

  it('names what it found in the reply text', () => {
    expect(describeBareLineEnding('lf')).toBe(
      'message refused: bare LF in DATA; lines must end with CRLF (RFC 5321 2.3.8)',
    );
    expect(describeBareLineEnding('cr')).toContain('bare CR');
  });
});
