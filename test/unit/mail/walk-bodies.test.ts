import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { defaultLimits, mailFixture, sha256 } from '../../../harness/mail-fixtures.ts';
import { createMemoryStore } from '../../../harness/mail-memory-store.ts';
import type { WalkLimits } from '../../../src/mail/walk-limits.ts';
import { walkMessage } from '../../../src/mail/walk-message.ts';

/**
 * The bodies of the top-level message, stored in UTF-8 when a workspace takes the body as a
 * document (walkMessage's storeBodies; src/mail/collect-body.ts), and only then.
 */

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** A message written line by line in Latin-1 (so 8-bit bytes are as written), CRLF line ends. */
const message = (lines: string[]) => Buffer.from(lines.join('\r\n'), 'latin1');

const latinHtmlLine =
  '<html><head><meta charset="windows-1252"></head><body>Herr M\u00fcller: 89,90 \u0080<img src="cid:Logo@Shop"></body></html>';
/** multipart/alternative: a quoted-printable ISO-8859-1 text and an 8-bit windows-1252 HTML. */
const latinAlternative = message([
  'From: Ann <ann@acme.example>',
  'Subject: Rechnung',
  'MIME-Version: 1.0',
  'Content-Type: multipart/alternative; boundary="b"',
  '',
  '--b',
  'Content-Type: text/plain; charset=ISO-8859-1',
  'Content-Transfer-Encoding: quoted-printable',
  '',
  'Herr M=FCller, Summe 89,90 EUR',
  '--b',
  'Content-Type: text/html; charset=windows-1252',
  'Content-Transfer-Encoding: 8bit',
  '',
  latinHtmlLine,
  '--b--',
  '',
]);
const latinText = Buffer.from('Herr Müller, Summe 89,90 EUR', 'utf8');
const latinHtml = Buffer.concat([
  BOM,
  Buffer.from(
    '<html><head><meta charset="windows-1252"></head><body>Herr Müller: 89,90 €<img src="cid:Logo@Shop"></body></html>',
    'utf8',
  ),
]);

async function walk(bytes: Buffer, storeBodies: boolean, limits: WalkLimits = defaultLimits) {
  const store = createMemoryStore();
  const result = await walkMessage(Readable.from([bytes]), store, limits, { storeBodies });
  return { result, store };
}

/** A message whose only part is a body of this type, charset and transfer encoding. */
function singleBody(type: string, charset: string | null, encoding: string, body: string): Buffer {
  return message([
    'From: Ann <ann@acme.example>',
    'MIME-Version: 1.0',
    `Content-Type: ${type}${charset === null ? '' : `; charset=${charset}`}`,
    `Content-Transfer-Encoding: ${encoding}`,
    '',
    body,
  ]);
}

describe('walkMessage: bodies as documents (storeBodies)', () => {
  it('stores each top-level body converted to UTF-8, the HTML one behind a byte order mark', async () => {
    const { result, store } = await walk(latinAlternative, true);
    expect(result.parts.map((part) => [part.path, part.detectedType, part.stored])).toEqual([
      ['body (text/plain)', 'txt', true],
      ['body (text/html)', 'html', true],
    ]);
    for (const [index, expected] of [latinText, latinHtml].entries()) {
      expect(store.parts.get(index)?.state).toBe('ended');
      expect(store.parts.get(index)?.bytes?.toString('hex')).toBe(expected.toString('hex'));
      expect(result.parts[index]).toMatchObject({ size: expected.length, sha256: sha256(expected) });
    }
    // The HTML body is scanned for cid: references as before.
    expect([...result.htmlCids]).toEqual(['logo@shop']);
  });

  it('stores no body without storeBodies, and leaves them unhashed', async () => {
    const { result, store } = await walk(latinAlternative, false);
    expect(store.parts.size).toBe(0);
    expect(result.parts.map((part) => [part.stored, part.sha256, part.detectedType, part.size])).toEqual([
      [false, '', null, 'Herr M\u00fcller, Summe 89,90 EUR'.length],
      [false, '', null, latinHtmlLine.length],
    ]);
    expect([...result.htmlCids]).toEqual(['logo@shop']);
  });

  it.each([
    [
      'ISO-2022-JP (stateful, decoded whole)',
      'text/plain',
      'ISO-2022-JP',
      '7bit',
      '\u001b$B$K$[$s\u001b(B',
      'にほん',
    ],
    ['no charset: read as UTF-8', 'text/plain', null, '8bit', 'caf\u00c3\u00a9', 'café'],
    [
      'an unknown charset: read as UTF-8, invalid bytes replaced',
      'text/plain',
      'x-klingon',
      '8bit',
      'a\u00ffb',
      'a\ufffdb',
    ],
    [
      'us-ascii with 8-bit bytes: read as windows-1252',
      'text/plain',
      'us-ascii',
      '8bit',
      'caf\u00e9',
      'café',
    ],
    [
      'UTF-8 HTML that has a BOM keeps one',
      'text/html',
      'utf-8',
      '8bit',
      '\u00ef\u00bb\u00bf<p>caf\u00c3\u00a9</p>',
      '\ufeff<p>café</p>',
    ],
  ])('%s', async (_case, type, charset, encoding, body, expected) => {
    const { result, store } = await walk(singleBody(type, charset, encoding, body), true);
    const bytes = Buffer.from(expected, 'utf8');
    expect(store.parts.get(0)?.bytes?.toString('hex')).toBe(bytes.toString('hex'));
    expect(result.parts[0]).toMatchObject({ stored: true, sha256: sha256(bytes), size: bytes.length });
  });

  it('does not store the bodies of an attached message', async () => {
    const store = createMemoryStore();
    const result = await walkMessage(mailFixture('forwarded.eml'), store, defaultLimits, {
      storeBodies: true,
    });
    const bodies = result.parts.filter((part) => part.role === 'body');
    expect(bodies.map((part) => [part.depth, part.stored])).toEqual([
      [0, true],
      [1, false],
    ]);
    expect(store.parts.has(bodies[1]?.index ?? -1)).toBe(false);
  });

  it('stores no empty body', async () => {
    const { result, store } = await walk(singleBody('text/html', 'utf-8', '7bit', ''), true);
    expect(result.parts[0]).toMatchObject({ size: 0, stored: false, sha256: '' });
    expect(store.parts.size).toBe(0);
  });

  it.each([
    ['as sent', 'a'.repeat(100), 99],
    // 60 Latin-1 bytes are 120 bytes of UTF-8.
    ['in UTF-8', '\u00e9'.repeat(60), 100],
  ])('keeps a body over maxPartSize %s out of the store, and the walk goes on', async (_case, text, max) => {
    const limits = { ...defaultLimits, maxPartSize: max };
    const { result, store } = await walk(singleBody('text/plain', 'iso-8859-1', '8bit', text), true, limits);
    expect(result.parts[0]).toMatchObject({ role: 'body', stored: false, sha256: '', detectedType: null });
    expect(store.parts.get(0)?.state ?? 'never opened').not.toBe('ended');
  });
});
