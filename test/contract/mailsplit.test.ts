import { existsSync, readFileSync } from 'node:fs';
import { Splitter, type SplitterChunk } from '@zone-eu/mailsplit';
import { describe, expect, it } from 'vitest';
import {
  declaredVersion,
  EXACT_VERSION,
  installedFile,
  installedManifest,
  projectFile,
} from '../../harness/pinned-version.ts';

/**
 * What the gateway takes from mailsplit beyond its documented stream (docs/overrides.md,
 * "@zone-eu/mailsplit"): the patch of patches/ applied to the version it was made for, and
 * each node's `_headerlen`, from which the MIME walk (src/mail/walk-message.ts) computes
 * where a part's bytes lie in the raw copy. test/unit/mail/splitter-lines.test.ts holds the patched splitter
 * to the unpatched one on every way of cutting the input.
 */

async function split(input: Buffer): Promise<SplitterChunk[]> {
  const splitter = new Splitter();
  const items: SplitterChunk[] = [];
  const reading = (async () => {
    for await (const item of splitter as AsyncIterable<SplitterChunk>) items.push(item);
  })();
  splitter.end(input);
  await reading;
  return items;
}

const message = Buffer.from(
  [
    'From: a@example.com',
    'Subject: two parts',
    'Content-Type: multipart/mixed; boundary="b1"',
    '',
    'preamble',
    '--b1',
    'Content-Type: text/plain',
    '',
    'body line',
    '--b1',
    'Content-Type: application/pdf',
    'Content-Disposition: attachment; filename="a.pdf"',
    'Content-Transfer-Encoding: base64',
    '',
    'JVBERi0xLjQKJSVFT0YK',
    '--b1--',
    '',
  ].join('\r\n'),
);

describe('@zone-eu/mailsplit, as patched and read by the MIME walk', () => {
  it('is installed at the exact version package.json pins, the one its patch was made for', () => {
    const pinned = declaredVersion('@zone-eu/mailsplit');
    expect(pinned).toMatch(EXACT_VERSION);
    expect(installedManifest('@zone-eu/mailsplit').version).toBe(pinned);
    // patch-package applies a patch only to the version its name carries.
    expect(existsSync(projectFile(`patches/@zone-eu+mailsplit+${pinned}.patch`))).toBe(true);
  });

  it('has the patch applied: the line search and the skip of lines that cannot be a delimiter', () => {
    const splitter = readFileSync(installedFile('@zone-eu/mailsplit', 'lib/message-splitter.js'), 'utf8');
    for (const line of [
      'function nextLineFeed(chunk, from) {',
      'function plainLinesEnd(chunk, start) {',
      'this.canSkipLines()',
    ]) {
      expect(splitter).toContain(line);
    }
    expect(typeof (Splitter.prototype as unknown as Record<string, unknown>).canSkipLines).toBe('function');
  });

  it('gives each node the length of its header block as _headerlen, so offsets add up to the raw bytes', async () => {
    const items = await split(message);
    let offset = 0;
    const leafBodies: string[] = [];
    for (const item of items) {
      if (item.type === 'node') {
        expect(item._headerlen).toBe(item.getHeaders().length);
        offset += item._headerlen;
      } else {
        // Each body or structure chunk is the raw bytes at the offset the walk computes.
        expect(message.subarray(offset, offset + item.value.length)).toEqual(Buffer.from(item.value));
        if (item.type === 'body' && item.value.length > 0)
          leafBodies.push(Buffer.from(item.value).toString());
        offset += item.value.length;
      }
    }
    expect(offset).toBe(message.length);
    expect(leafBodies.join('')).toContain('JVBERi0xLjQKJSVFT0YK');
  });
});
