import { describe, expect, it } from 'vitest';
import type { LeafPart } from '../../../src/mail/leaf-part.ts';
import { describeFound, type SkippedPart, selectAttachments } from '../../../src/mail/select-attachments.ts';
import type { WalkResult } from '../../../src/mail/walk-message.ts';

let nextIndex = 0;

function leaf(overrides: Partial<LeafPart>): LeafPart {
  const index = nextIndex++;
  return {
    index,
    partNumber: String(index + 1),
    declaredType: 'application/pdf',
    disposition: 'attachment',
    fileName: 'invoice.pdf',
    contentId: null,
    depth: 0,
    role: 'candidate',
    size: 1000,
    sha256: 'f'.repeat(64),
    detectedType: 'pdf',
    bytesType: 'application/pdf',
    stored: true,
    exclusion: null,
    textContent: false,
    path: `part ${index + 1}`,
    container: null,
    inArchive: false,
    ...overrides,
  };
}

function walked(parts: LeafPart[], htmlCids: string[] = []): WalkResult {
  return { messageId: null, subject: null, fromHeaders: [], parts, htmlCids: new Set(htmlCids) };
}

const textBody = () =>
  leaf({
    role: 'body',
    declaredType: 'text/plain',
    disposition: null,
    fileName: null,
    sha256: '',
    detectedType: null,
    bytesType: null,
    stored: false,
  });

describe('selectAttachments', () => {
  it.each<[string, Partial<LeafPart>, string[], Omit<SkippedPart, 'part'> | null]>([
    ['a PDF attachment', {}, [], null],
    ['a PDF inside a forwarded message', { depth: 1, partNumber: '2.2' }, [], null],
    ['an inline PDF with a name', { disposition: 'inline', fileName: 'statement.pdf' }, [], null],
    [
      'an inline PDF the body links to by cid:',
      { disposition: 'inline', contentId: 'statement@x' },
      ['statement@x'],
      null,
    ],
    [
      'an image nobody references',
      { declaredType: 'image/png', detectedType: 'png', bytesType: 'image/png', contentId: 'receipt@x' },
      ['logo@x'],
      null,
    ],
    [
      'an inline image the body shows',
      {
        declaredType: 'image/png',
        detectedType: 'png',
        bytesType: 'image/png',
        disposition: 'inline',
        contentId: 'logo@x',
      },
      ['logo@x'],
      { kind: 'inline_image', reason: 'inline image referenced by the message body' },
    ],
    [
      'a referenced image, whatever the case of its Content-ID',
      {
        declaredType: 'image/jpeg',
        detectedType: 'jpg',
        bytesType: 'image/jpeg',
        contentId: 'Image001.JPG@01D9',
      },
      ['image001.jpg@01d9'],
      { kind: 'inline_image', reason: 'inline image referenced by the message body' },
    ],
    [
      'a referenced GIF (unsupported, but an inline image first)',
      { declaredType: 'image/gif', detectedType: null, bytesType: 'image/gif', contentId: 'spacer@x' },
      ['spacer@x'],
      { kind: 'inline_image', reason: 'inline image referenced by the message body' },
    ],
    [
      'an empty part',
      { size: 0, detectedType: null, bytesType: null, stored: false },
      [],
      { kind: 'empty', reason: 'empty part' },
    ],
    [
      'a zip archive',
      { declaredType: 'application/zip', detectedType: null, bytesType: 'application/zip', stored: false },
      [],
      { kind: 'unsupported_type', reason: 'unsupported type application/zip (declared application/zip)' },
    ],
    [
      'an executable named invoice.pdf',
      { detectedType: null, bytesType: 'application/x-msdownload', stored: false },
      [],
      {
        kind: 'unsupported_type',
        reason: 'unsupported type application/x-msdownload (declared application/pdf)',
      },
    ],
    [
      'a PGP signature',
      { declaredType: 'application/pgp-signature', detectedType: null, bytesType: null, stored: false },
      [],
      {
        kind: 'unsupported_type',
        reason: 'unsupported type application/pgp-signature (declared; its bytes match no supported format)',
      },
    ],
    [
      'text declared octet-stream and named .bin',
      {
        declaredType: 'application/octet-stream',
        fileName: 'export.bin',
        detectedType: null,
        bytesType: null,
        stored: false,
        textContent: true,
      },
      [],
      {
        kind: 'unsupported_type',
        reason:
          'unsupported type application/octet-stream (declared; its bytes are text, which is taken only when declared text/plain or text/html or named .txt, .text, .htm or .html)',
      },
    ],
    [
      'a part its headers rule out, before its size or type',
      {
        declaredType: 'message/delivery-status',
        size: 0,
        detectedType: null,
        bytesType: null,
        stored: false,
        exclusion: 'a delivery report (message/delivery-status), not a document',
      },
      [],
      { kind: 'report', reason: 'a delivery report (message/delivery-status), not a document' },
    ],
    [
      'a pointer to content stored elsewhere',
      {
        declaredType: 'message/external-body',
        detectedType: null,
        bytesType: null,
        stored: false,
        exclusion: 'a pointer to content stored elsewhere (message/external-body), not the content',
      },
      [],
      {
        kind: 'pointer',
        reason: 'a pointer to content stored elsewhere (message/external-body), not the content',
      },
    ],
    [
      'a ZIP archive opened into parts of their own',
      {
        declaredType: 'application/zip',
        detectedType: null,
        bytesType: 'application/zip',
        container: { kind: 'zip', outcome: 'a ZIP archive: its 2 files are listed as parts of their own' },
      },
      [],
      { kind: 'container', reason: 'a ZIP archive: its 2 files are listed as parts of their own' },
    ],
  ])('%s → %o', (_case, overrides, htmlCids, skip) => {
    const part = leaf(overrides);
    const { documents, skipped } = selectAttachments(walked([textBody(), part], htmlCids));
    if (skip === null) {
      expect(documents).toEqual([part]);
      expect(skipped).toEqual([]);
    } else {
      expect(documents).toEqual([]);
      expect(skipped).toEqual([{ part, ...skip }]);
    }
  });

  it('lists neither text nor HTML bodies', () => {
    const html = leaf({
      role: 'body',
      declaredType: 'text/html',
      fileName: null,
      detectedType: null,
      stored: false,
    });
    expect(selectAttachments(walked([textBody(), html]))).toEqual({ documents: [], skipped: [] });
  });

  it('keeps message order', () => {
    const parts = [leaf({ fileName: 'a.pdf' }), leaf({ size: 0 }), leaf({ fileName: 'b.pdf' })];
    expect(selectAttachments(walked(parts)).documents.map((part) => part.fileName)).toEqual([
      'a.pdf',
      'b.pdf',
    ]);
  });
});

describe('describeFound', () => {
  it.each<[string, LeafPart[], string]>([
    ['only bodies', [textBody()], 'found no attachment, only the message text'],
    [
      'unsupported parts, by the type their bytes show',
      [
        textBody(),
        leaf({ fileName: 'invite.ics', declaredType: 'text/calendar', bytesType: 'text/calendar' }),
        leaf({ fileName: 'sig.asc', declaredType: 'application/pgp-signature', bytesType: null }),
      ],
      'found 2 parts: invite.ics (text/calendar), sig.asc (application/pgp-signature)',
    ],
    ['an empty part', [leaf({ fileName: 'empty.pdf', size: 0 })], 'found 1 part: empty.pdf (empty)'],
    [
      'a part without a name, by its number',
      [
        leaf({
          fileName: null,
          partNumber: '2.1',
          declaredType: 'application/zip',
          bytesType: 'application/zip',
        }),
      ],
      'found 1 part: part 2.1 (application/zip)',
    ],
    [
      'a name with line breaks and bidi controls, cleaned',
      [leaf({ fileName: 'a\r\n250 ok\u202E.zip', bytesType: 'application/zip' })],
      'found 1 part: a250 ok.zip (application/zip)',
    ],
  ])('%s', (_case, parts, expected) => {
    expect(describeFound(walked(parts))).toBe(expected);
  });

  it('caps its length and counts what it left out', () => {
    const parts = Array.from({ length: 40 }, (_, i) =>
      leaf({ fileName: `scan-${i}.zip`, bytesType: 'application/zip' }),
    );
    const text = describeFound(walked(parts));
    expect(text.length).toBeLessThanOrEqual(300);
    expect(text).toMatch(/^found 40 parts: scan-0\.zip \(application\/zip\), scan-1\.zip .*, and \d+ more$/);
  });

  it('shortens a very long name', () => {
    const text = describeFound(
      walked([leaf({ fileName: `${'n'.repeat(500)}.zip`, bytesType: 'application/zip' })]),
    );
    expect(text).toBe(`found 1 part: ${'n'.repeat(57)}... (application/zip)`);
  });
});
