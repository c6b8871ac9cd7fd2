import { describe, expect, it } from 'vitest';
import { defaultLimits, fileFixture, mailFixture, sha256 } from '../../../harness/mail-fixtures.ts';
import { createMemoryStore, type MemoryStore } from '../../../harness/mail-memory-store.ts';
import { selectAttachments } from '../../../src/mail/select-attachments.ts';
import { type WalkResult, walkMessage } from '../../../src/mail/walk-message.ts';

/** Gaps real mail showed in the walk (test/fixtures/mail/README.md says where each message is from). */

async function walk(name: string): Promise<{ result: WalkResult; store: MemoryStore }> {
  const store = createMemoryStore();
  const result = await walkMessage(mailFixture(name), store, defaultLimits);
  return { result, store };
}

function reasons(result: WalkResult): Array<[string, string]> {
  return selectAttachments(result).skipped.map(({ part, reason }) => [part.partNumber, reason]);
}

const pdf = fileFixture('sample.pdf');

describe('walkMessage: uuencoded parts', () => {
  it('decodes x-uuencode, uuencode and x-uue (any case) to the original bytes, and stores them', async () => {
    const { result, store } = await walk('uuencoded.eml');
    const expected: Array<[string, string, Buffer]> = [
      ['invoice-uu.pdf', 'pdf', pdf],
      ['named-by-begin.pdf', 'pdf', Buffer.concat([pdf, Buffer.from('%second')])],
      ['scan.png', 'png', fileFixture('image.png')],
    ];
    const candidates = result.parts.filter((part) => part.role === 'candidate');
    expect(candidates.map((part) => [part.fileName, part.detectedType, part.sha256])).toEqual(
      expected.map(([name, type, bytes]) => [name, type, sha256(bytes)]),
    );
    for (const [i, part] of candidates.entries()) {
      expect(store.parts.get(part.index)?.bytes?.equals(expected[i]?.[2] ?? Buffer.alloc(0))).toBe(true);
    }
    expect(selectAttachments(result).documents).toHaveLength(3);
  });
});

describe('walkMessage: pointers and reports are not documents', () => {
  it('skips message/external-body parts, named or not (CPython msg_36)', async () => {
    const { result, store } = await walk('external-body.eml');
    expect(reasons(result)).toEqual([
      ['2.1', 'a pointer to content stored elsewhere (message/external-body), not the content'],
      ['2.2', 'a pointer to content stored elsewhere (message/external-body), not the content'],
    ]);
    expect(result.parts.find((part) => part.partNumber === '2.2')?.fileName).toBe(
      'draft-ietf-mboned-mix-00.txt',
    );
    expect(store.parts.size).toBe(0);
  });

  it('skips the delivery status and the returned message of a bounce (CPython msg_16)', async () => {
    const { result, store } = await walk('bounce-delivery-status.eml');
    expect(reasons(result)).toEqual([
      ['2', 'a delivery report (message/delivery-status), not a document'],
      [
        '3',
        'a message returned by a report (multipart/report): its attachments are not documents sent to this address',
      ],
    ]);
    expect(store.parts.size).toBe(0);
  });

  it('skips the headers a bounce returns (CPython msg_43)', async () => {
    const { result } = await walk('bounce-returned-headers.eml');
    expect(reasons(result)).toEqual([
      ['2', 'a delivery report (message/delivery-status), not a document'],
      ['3', 'the headers of a returned message (text/rfc822-headers), not a document'],
    ]);
  });

  it('skips the named parts of a read receipt, which were uploaded as TXT', async () => {
    const { result } = await walk('read-receipt.eml');
    expect(reasons(result)).toEqual([
      ['2', 'a read receipt (message/disposition-notification), not a document'],
      ['3', 'the headers of a returned message (text/rfc822-headers), not a document'],
    ]);
  });

  it('does not walk into the message a bounce returns, so its invoice PDF is not uploaded again', async () => {
    const { result, store } = await walk('bounce-with-invoice.eml');
    expect(result.parts.map((part) => [part.partNumber, part.declaredType, part.fileName])).toEqual([
      ['1', 'text/plain', null],
      ['2', 'message/delivery-status', 'details.txt'],
      ['3', 'message/rfc822', null],
    ]);
    expect(selectAttachments(result).documents).toEqual([]);
    expect(store.parts.size).toBe(0);
  });
});

describe('walkMessage: empty parts', () => {
  it('reads a part with no body as empty wherever it stands, and a blank line as one line break', async () => {
    const { result, store } = await walk('empty-parts.eml');
    expect(result.parts.map((part) => [part.fileName, part.size])).toEqual([
      [null, 14],
      ['first.txt', 0],
      ['empty.pdf', 0],
      // One blank line before the delimiter's own line break: the body is that line break.
      ['blank-line.txt', 1],
      ['invoice.pdf', pdf.length],
      ['last.txt', 0],
    ]);
    expect(reasons(result)).toEqual([
      ['2', 'empty part'],
      ['3', 'empty part'],
      ['6', 'empty part'],
    ]);
    expect(store.parts.get(4)?.bytes?.equals(pdf)).toBe(true);
  });

  it('gives a part that is not empty its bytes without the line break before the next delimiter', async () => {
    const { result } = await walk('mismatched-names.eml');
    expect(result.parts.find((part) => part.fileName === 'export.bin')?.size).toBe(
      'Invoice 1, total 12.00 EUR'.length,
    );
  });
});

describe('walkMessage: names and types', () => {
  it('reads raw UTF-8 names with one bad byte as UTF-8, and raw Latin-1 names as Latin-1', async () => {
    const { result } = await walk('mismatched-names.eml');
    const pdfs = result.parts.filter((part) => part.detectedType === 'pdf');
    expect(pdfs.map((part) => part.fileName)).toEqual([
      'Rechnung März\ufffd.pdf',
      'Übersicht März.pdf',
      'Köln Übersicht.pdf',
    ]);
  });

  it('detects PNG bytes named test.rtf as PNG, and says why text declared octet-stream is skipped', async () => {
    const { result } = await walk('mismatched-names.eml');
    expect(result.parts.find((part) => part.fileName === 'test.rtf')?.detectedType).toBe('png');
    expect(reasons(result)).toEqual([
      [
        '3',
        'unsupported type application/octet-stream (declared; its bytes are text, which is taken only when declared text/plain or text/html or named .txt, .text, .htm or .html)',
      ],
    ]);
  });
});
