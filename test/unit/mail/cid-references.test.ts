import { describe, expect, it } from 'vitest';
import { createCidScanner } from '../../../src/mail/cid-references.ts';

function scan(chunks: string[], maxBytes?: number): string[] {
  const found = new Set<string>();
  const scanner = createCidScanner(found, maxBytes);
  for (const chunk of chunks) scanner.push(Buffer.from(chunk, 'latin1'));
  scanner.end();
  return [...found].sort();
}

describe('createCidScanner', () => {
  it.each<[string, string, string[]]>([
    ['an img src', '<img src="cid:logo@acme.example">', ['logo@acme.example']],
    ['single quotes', "<img src='cid:logo@acme.example'>", ['logo@acme.example']],
    ['an unquoted attribute', '<img src=cid:logo@acme.example alt=x>', ['logo@acme.example']],
    ['CSS url()', '<td style="background:url(cid:bg@acme.example)">', ['bg@acme.example']],
    [
      'CSS url() with entities',
      '<td style="background:url(&quot;cid:bg@acme.example&quot;)">',
      ['bg@acme.example'],
    ],
    ['upper-case scheme and id, lower-cased', '<img src="CID:Logo@ACME.example">', ['logo@acme.example']],
    [
      'a percent-encoded id, decoded (RFC 2392)',
      '<img src="cid:logo%40acme.example">',
      ['logo@acme.example'],
    ],
    ['a malformed escape, kept as written', '<img src="cid:100%zz@acme">', ['100%zz@acme']],
    ['several, each once', '<img src="cid:a@x"><img src="cid:b@x"><img src="cid:a@x">', ['a@x', 'b@x']],
    ['a reference that ends the body', 'see cid:last@x', ['last@x']],
    ['no reference', '<img src="https://acme.example/logo.png"> cid: alone', []],
  ])('finds %s', (_case, html, expected) => {
    expect(scan([html])).toEqual(expected);
  });

  it('finds a reference split across chunks at every position', () => {
    const html = '<p>Hello</p><img src="cid:image001.png@01D9C0A1.2B3C4D50" width="10">';
    for (let cut = 1; cut < html.length; cut++) {
      expect(scan([html.slice(0, cut), html.slice(cut)]), `cut at ${cut}`).toEqual([
        'image001.png@01d9c0a1.2b3c4d50',
      ]);
    }
  });

  it('finds a reference delivered one byte at a time', () => {
    expect(scan([...'<img src="cid:logo@acme.example">'])).toEqual(['logo@acme.example']);
  });

  it('reads no more than its cap', () => {
    const filler = 'x'.repeat(100);
    expect(scan([filler, '<img src="cid:late@x">'], 100)).toEqual([]);
    expect(scan([filler, '<img src="cid:late@x">'], 200)).toEqual(['late@x']);
  });

  it('ignores an id longer than any real Content-ID', () => {
    expect(scan([`<img src="cid:${'a'.repeat(2000)}">`])).toEqual([]);
  });
});
