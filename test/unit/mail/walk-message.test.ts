import { Readable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { defaultLimits, fileFixture, mailFixture, sha256 } from '../../../harness/mail-fixtures.ts';
import { createMemoryStore, type MemoryStore } from '../../../harness/mail-memory-store.ts';
import { selectAttachments } from '../../../src/mail/select-attachments.ts';
import { type WalkResult, walkMessage } from '../../../src/mail/walk-message.ts';

interface Walked {
  result: WalkResult;
  store: MemoryStore;
}

async function walkFixture(name: string): Promise<Walked> {
  const store = createMemoryStore();
  const result = await walkMessage(mailFixture(name), store, defaultLimits);
  return { result, store };
}

/** Walk a fixture once for a describe block; each test reads the outcome. */
function walkOnce(name: string): () => Walked {
  let walked: Walked | null = null;
  beforeAll(async () => {
    walked = await walkFixture(name);
  });
  return () => {
    if (walked === null) throw new Error(`${name} was not walked`);
    return walked;
  };
}

function partNamed(result: WalkResult, fileName: string) {
  const part = result.parts.find((candidate) => candidate.fileName === fileName);
  if (part === undefined) throw new Error(`no part named ${fileName}`);
  return part;
}

describe('walkMessage: every supported format, detected from the bytes', () => {
  const walked = walkOnce('every-format.eml');

  it.each([
    ['invoice.pdf', 'application/pdf', 'pdf', 'sample.pdf'],
    ['scan.pdf', 'application/octet-stream', 'pdf', 'sample.pdf'],
    ['letter.doc', 'application/msword', 'doc', 'sample.doc'],
    [
      'letter.docx',
      'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      'docx',
      'sample.docx',
    ],
    ['notes.txt', 'text/plain', 'txt', 'sample.txt'],
    ['terms.rtf', 'application/rtf', 'rtf', 'sample.rtf'],
    ['page.html', 'text/html', 'html', 'sample.html'],
    ['photo.png', 'image/png', 'png', 'image.png'],
    ['photo.jpg', 'image/jpeg', 'jpg', 'image.jpg'],
    ['photo.tiff', 'image/tiff', 'tiff', 'image.tiff'],
    ['letter.odt', 'application/vnd.oasis.opendocument.text', 'odt', 'sample.odt'],
    ['ledger.xls', 'application/vnd.ms-excel', 'xls', 'sample.xls'],
    [
      'ledger.xlsx',
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      'xlsx',
      'sample.xlsx',
    ],
  ])('%s (declared %s) is %s, stored byte for byte', (fileName, declaredType, detectedType, file) => {
    const { result, store } = walked();
    const part = partNamed(result, fileName);
    const original = fileFixture(file);
    expect(part).toMatchObject({
      declaredType,
      detectedType,
      role: 'candidate',
      disposition: 'attachment',
      depth: 0,
      size: original.length,
      sha256: sha256(original),
      stored: true,
    });
    const stored = store.parts.get(part.index);
    expect(stored?.state).toBe('ended');
    expect(stored?.bytes?.equals(original)).toBe(true);
  });

  it('numbers the leaves in order, the body alternatives first', () => {
    const { result } = walked();
    expect(result.parts.map((part) => part.index)).toEqual([...Array(15).keys()]);
    expect(result.parts.map((part) => part.partNumber).slice(0, 4)).toEqual(['1.1', '1.2', '2', '3']);
  });

  it('keeps the text and HTML bodies out of the store', () => {
    const { result, store } = walked();
    const bodies = result.parts.filter((part) => part.role === 'body');
    expect(bodies.map((part) => [part.declaredType, part.stored, part.sha256, part.detectedType])).toEqual([
      ['text/plain', false, '', null],
      ['text/html', false, '', null],
    ]);
    expect(bodies.every((part) => part.size > 0 && !store.parts.has(part.index))).toBe(true);
  });

  it('reads the top-level headers', () => {
    const { result } = walked();
    expect(result.messageId).toBe('every-format.1@acme.example');
    expect(result.subject).toBe('Rechnungen für März');
    expect(result.fromHeaders).toEqual(['Accounts Payable <ap@acme.example>']);
  });
});

describe('walkMessage: parts that are not documents', () => {
  const walked = walkOnce('unsupported.eml');

  it.each([
    ['invite.ics', 'text/calendar', 'text/calendar', 210],
    ['empty.pdf', 'application/pdf', null, 0],
    ['invoice.pdf', 'application/pdf', 'application/x-msdownload', 128],
    ['signature.asc', 'application/pgp-signature', null, 228],
  ])(
    '%s (declared %s, bytes %s) has no supported type and is not stored',
    async (fileName, declaredType, bytesType, size) => {
      const { result, store } = walked();
      const part = partNamed(result, fileName);
      expect(part).toMatchObject({
        declaredType,
        bytesType,
        size,
        detectedType: null,
        stored: false,
        role: 'candidate',
      });
      expect(store.parts.has(part.index)).toBe(false);
    },
  );

  // Stored when a workspace unpacks archives: test/unit/mail/walk-archives.test.ts.
  it('counts a ZIP archive as a container, not a document, and stores none without storeArchives', async () => {
    const { result, store } = walked();
    const part = partNamed(result, 'archive.zip');
    expect(part).toMatchObject({
      bytesType: 'application/zip',
      detectedType: null,
      stored: false,
      size: fileFixture('archive.zip').length,
      container: {
        kind: 'zip',
        outcome: 'a ZIP archive, not opened: no workspace it is addressed to sets archives: unpack',
      },
      path: `part ${part.partNumber} > archive.zip`,
    });
    expect(store.parts.has(part.index)).toBe(false);
  });

  it('selects nothing, and says why for each part', () => {
    const { documents, skipped } = selectAttachments(walked().result);
    expect(documents).toEqual([]);
    expect(skipped.map(({ part, reason }) => [part.fileName, reason])).toEqual([
      ['invite.ics', 'unsupported type text/calendar (declared text/calendar)'],
      ['archive.zip', 'a ZIP archive, not opened: no workspace it is addressed to sets archives: unpack'],
      ['empty.pdf', 'empty part'],
      ['invoice.pdf', 'unsupported type application/x-msdownload (declared application/pdf)'],
      [
        'signature.asc',
        'unsupported type application/pgp-signature (declared; its bytes are text, which is taken only when declared text/plain or text/html or named .txt, .text, .htm or .html)',
      ],
    ]);
  });

  it('walks through multipart/signed to the signed parts and the signature', () => {
    const { result } = walked();
    expect(result.parts.map((part) => part.partNumber)).toEqual(['1.1', '1.2', '1.3', '1.4', '1.5', '2']);
  });
});

describe('walkMessage: attached messages', () => {
  const walked = walkOnce('forwarded.eml');

  it.each([
    [0, '1', 0, 'body', null],
    [1, '2.1', 1, 'body', null],
    [2, '2.2', 1, 'candidate', 'supplier-invoice.pdf'],
    [3, '2.3.1', 2, 'candidate', 'delivery-note.pdf'],
  ])('leaf %i is part %s at depth %i (%s %s)', (index, partNumber, depth, role, fileName) => {
    const { result } = walked();
    expect(result.parts[index]).toMatchObject({ partNumber, depth, role, fileName });
  });

  it('stores the PDF of the forwarded message and of the message inside it', () => {
    const { result, store } = walked();
    const pdf = sha256(fileFixture('sample.pdf'));
    for (const index of [2, 3]) {
      expect(result.parts[index]).toMatchObject({ detectedType: 'pdf', sha256: pdf, stored: true });
      expect(store.parts.get(index)?.state).toBe('ended');
    }
  });

  it('takes the headers of the top-level message only', () => {
    const { result } = walked();
    expect(result.messageId).toBe('forwarded.1@acme.example');
    expect(result.fromHeaders).toEqual(['Office Manager <office@acme.example>']);
  });
});

describe('walkMessage: inline images', () => {
  const walked = walkOnce('inline-images.eml');

  it('collects the cid: references of the HTML body, lower-cased and percent-decoded', () => {
    const { result } = walked();
    expect([...result.htmlCids].sort()).toEqual([
      'chart@acme.example',
      'logo@acme.example',
      'statement@acme.example',
    ]);
  });

  it.each([
    ['logo.png', 'inline', 'logo@acme.example', 'png'],
    ['chart.jpg', 'inline', 'chart@acme.example', 'jpg'],
    ['statement.pdf', 'inline', 'statement@acme.example', 'pdf'],
    ['receipt.png', 'inline', 'receipt@acme.example', 'png'],
  ])('describes %s: %s, Content-ID %s, %s', (fileName, disposition, contentId, detectedType) => {
    const { result } = walked();
    expect(partNamed(result, fileName)).toMatchObject({
      disposition,
      contentId,
      detectedType,
      role: 'candidate',
    });
  });
});

describe('walkMessage and selectAttachments: inline images', () => {
  const walked = walkOnce('inline-images.eml');

  it('skips the images the HTML body shows and takes the inline PDF and the unreferenced image', () => {
    const { documents, skipped } = selectAttachments(walked().result);
    expect(documents.map((part) => part.fileName)).toEqual(['statement.pdf', 'receipt.png']);
    expect(skipped.map(({ part, reason }) => [part.fileName, reason])).toEqual([
      ['logo.png', 'inline image referenced by the message body'],
      ['chart.jpg', 'inline image referenced by the message body'],
    ]);
  });
});

describe('walkMessage: encoded names and transfer encodings', () => {
  const walked = walkOnce('encoded-names.eml');

  it.each([
    ['RFC 2231', 'Rechnung März.pdf', 'sample.pdf'],
    ['RFC 2231 continuations', 'Übersicht Quartal 1.xlsx', 'sample.xlsx'],
    ['RFC 2047 base64 in name=', 'Счет.pdf', 'sample.pdf'],
    ['RFC 2047 quoted-printable, ISO-8859-1', 'Köln Angebot.docx', 'sample.docx'],
    ['no decoding or sanitising of paths', '../../tmp/notes.txt', 'sample.txt'],
  ])('%s: %s decodes to the original bytes', (_how, fileName, file) => {
    const { result, store } = walked();
    const part = partNamed(result, fileName);
    expect(part.sha256).toBe(sha256(fileFixture(file)));
    expect(store.parts.get(part.index)?.bytes?.equals(fileFixture(file))).toBe(true);
  });

  it('decodes the subject but leaves From as sent, unfolded', () => {
    const { result } = walked();
    expect(result.subject).toBe('Rechnungen über 100 €');
    expect(result.fromHeaders).toEqual(['=?UTF-8?Q?J=C3=BCrgen_M=C3=BCller?= <juergen@acme.example>']);
  });
});

describe('walkMessage: top-level headers', () => {
  it('reads an empty message as one empty body', async () => {
    const result = await walkMessage(Readable.from([Buffer.alloc(0)]), createMemoryStore(), defaultLimits);
    expect(result).toMatchObject({ messageId: null, subject: null, fromHeaders: [] });
    expect(result.parts).toEqual([expect.objectContaining({ role: 'body', size: 0, partNumber: '1' })]);
  });

  it('lists every From header in order, and null for a missing Subject and Message-ID', async () => {
    const { result } = await walkFixture('two-from.eml');
    expect(result).toMatchObject({
      messageId: null,
      subject: null,
      fromHeaders: ['First <first@acme.example>', 'Second <second@acme.example>'],
    });
    expect(result.parts).toHaveLength(1);
    expect(result.parts[0]).toMatchObject({ partNumber: '1', role: 'body', declaredType: 'text/plain' });
  });
});
