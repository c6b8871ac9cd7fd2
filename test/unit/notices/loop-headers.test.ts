import { describe, expect, it } from 'vitest';
import { headerBlockEnd, readLoopHeaders } from '../../../src/notices/loop-headers.ts';

const block = (...lines: string[]) => Buffer.from(`${lines.join('\r\n')}\r\n\r\nbody\r\n`);

describe('readLoopHeaders', () => {
  it.each([
    [
      'a person’s mail',
      block('From: a@b.example', 'Subject: hi'),
      { autoSubmitted: null, precedence: null, listFields: [] },
    ],
    [
      'Auto-Submitted with a parameter and odd case',
      block('From: a@b.example', 'Auto-Submitted: Auto-Replied; owner-email="x@y.example"'),
      { autoSubmitted: 'auto-replied', precedence: null, listFields: [] },
    ],
    [
      'Auto-Submitted with a comment',
      block('Auto-Submitted: auto-generated (vacation)'),
      { autoSubmitted: 'auto-generated', precedence: null, listFields: [] },
    ],
    [
      'Precedence folded',
      block('Precedence:\r\n  BULK'),
      { autoSubmitted: null, precedence: 'bulk', listFields: [] },
    ],
    [
      'list fields',
      block('List-Id: <x.lists.example>', 'List-Unsubscribe: <mailto:u@x>', 'list-id: <dup>'),
      { autoSubmitted: null, precedence: null, listFields: ['list-id', 'list-unsubscribe'] },
    ],
  ])('%s', (_name, bytes, expected) => {
    expect(readLoopHeaders(bytes.subarray(0, headerBlockEnd(bytes)))).toEqual(expected);
  });

  it('reads only the message’s own header, not an attached message’s', () => {
    const bytes = block(
      'From: a@b.example',
      'Content-Type: message/rfc822',
      '',
      'Auto-Submitted: auto-replied',
    );
    expect(readLoopHeaders(bytes.subarray(0, headerBlockEnd(bytes))).autoSubmitted).toBeNull();
  });
});

describe('headerBlockEnd', () => {
  it.each([
    ['CRLF', 'A: 1\r\nB: 2\r\n\r\nbody', 14],
    ['bare LF', 'A: 1\nB: 2\n\nbody', 11],
    ['no end in reach', 'A: 1\r\nB: 2', -1],
  ])('%s', (_name, text, expected) => {
    expect(headerBlockEnd(Buffer.from(text))).toBe(expected);
  });
});
