import { once } from 'node:events';
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { defaultLimits, mailFixture, mailFixtureText } from '../../../harness/mail-fixtures.ts';
import { generatedMessage } from '../../../harness/mail-generated-message.ts';
import { createMemoryStore, type MemoryStore } from '../../../harness/mail-memory-store.ts';
import { RefusalError } from '../../../src/errors.ts';
import type { PartStore } from '../../../src/mail/part-store.ts';
import type { WalkLimits } from '../../../src/mail/walk-limits.ts';
import { walkMessage } from '../../../src/mail/walk-message.ts';

async function refusal(
  source: Readable,
  store: PartStore,
  limits: Partial<WalkLimits>,
): Promise<RefusalError> {
  const err: unknown = await walkMessage(source, store, { ...defaultLimits, ...limits }).then(
    () => new Error('the walk succeeded'),
    (thrown: unknown) => thrown,
  );
  if (!(err instanceof RefusalError)) throw err;
  return err;
}

function states(store: MemoryStore): string[] {
  return [...store.parts.values()].map((part) => part.state);
}

/** A message whose only leaf sits inside `levels` nested multiparts. */
function nestedMultiparts(levels: number): string {
  const lines = ['From: a@acme.example', 'MIME-Version: 1.0'];
  for (let level = 0; level < levels; level++) {
    lines.push(`Content-Type: multipart/mixed; boundary="b${level}"`, '', `--b${level}`);
  }
  lines.push('Content-Type: text/plain', '', 'deep');
  for (let level = levels - 1; level >= 0; level--) lines.push(`--b${level}--`);
  return `${lines.join('\r\n')}\r\n`;
}

describe('walkMessage: MIME limits', () => {
  it.each([
    [
      'more leaves than maxParts',
      'every-format.eml',
      { maxParts: 3 },
      'the message has more than the 3 parts',
      1,
    ],
    [
      'an attached message nested beyond maxDepth',
      'forwarded.eml',
      { maxDepth: 1 },
      'nested more than 1 level deep',
      1,
    ],
    [
      'any attached message with maxDepth 0',
      'forwarded.eml',
      { maxDepth: 0 },
      'nested more than 0 levels deep',
      0,
    ],
    [
      'a header block over maxHeaderBytes',
      'every-format.eml',
      { maxHeaderBytes: 256 },
      'larger than the 256 bytes',
      0,
    ],
  ])(
    'refuses %s with MIME_LIMIT, discarding the parts it had stored',
    async (_case, fixture, limits, message, stored) => {
      const store = createMemoryStore();
      const err = await refusal(mailFixture(fixture), store, limits);
      expect(err.code).toBe('MIME_LIMIT');
      expect(err.message).toContain(message);
      expect(states(store)).toEqual(Array(stored).fill('discarded'));
    },
  );

  it('takes a message at exactly maxParts leaves', async () => {
    const result = await walkMessage(mailFixture('every-format.eml'), createMemoryStore(), {
      ...defaultLimits,
      maxParts: 15,
    });
    expect(result.parts).toHaveLength(15);
  });

  it('takes attached messages as deep as maxDepth', async () => {
    const result = await walkMessage(mailFixture('forwarded.eml'), createMemoryStore(), {
      ...defaultLimits,
      maxDepth: 2,
    });
    expect(result.parts.map((part) => part.depth)).toEqual([0, 1, 1, 2]);
  });

  it('refuses a message of more containers than its parts allow', async () => {
    const err = await refusal(Readable.from([nestedMultiparts(10)]), createMemoryStore(), { maxParts: 3 });
    expect(err.code).toBe('MIME_LIMIT');
    expect(err.message).toContain('more MIME parts than the 3');
  });

  it('refuses multiparts nested deeper than it reads', async () => {
    const ok = await walkMessage(Readable.from([nestedMultiparts(30)]), createMemoryStore(), defaultLimits);
    expect(ok.parts).toHaveLength(1);
    const err = await refusal(Readable.from([nestedMultiparts(40)]), createMemoryStore(), {});
    expect(err.code).toBe('MIME_LIMIT');
    expect(err.message).toContain('multiparts are nested deeper than the 32 levels');
  });
});

describe('walkMessage: parts over the size limit', () => {
  it('names the part and the limit in MB, and discards the parts stored before it', async () => {
    const store = createMemoryStore();
    const err = await refusal(mailFixture('every-format.eml'), store, { maxPartSize: 1000 });
    expect(err.code).toBe('PART_TOO_LARGE');
    expect(err.message).toBe(
      'attachment "letter.doc" is larger than the 0.001 MB the parsing service accepts',
    );
    // invoice.pdf and scan.pdf were stored in full, letter.doc never reached the store.
    expect([...store.parts.keys()]).toEqual([2, 3]);
    expect(states(store)).toEqual(['discarded', 'discarded']);
  });

  it('stops at the limit, discards the part being stored, and drains the source', async () => {
    const message = generatedMessage(3 * 1024 * 1024);
    const store = createMemoryStore({ keepBytes: false });
    const err = await refusal(message.stream, store, { maxPartSize: 1_000_000 });
    expect(err.message).toBe('attachment "large.pdf" is larger than the 1 MB the parsing service accepts');
    const part = store.parts.get(1);
    expect(part?.state).toBe('discarded');
    expect(part?.size).toBeLessThanOrEqual(1_000_000);
    await finished(message.stream);
    expect(message.bytesGiven()).toBe(message.totalBytes);
  });

  it('says "20 MB" for the service limit', async () => {
    const message = generatedMessage(20_000_001, 'scan.pdf');
    const err = await refusal(message.stream, createMemoryStore({ keepBytes: false }), {});
    expect(err.message).toBe('attachment "scan.pdf" is larger than the 20 MB the parsing service accepts');
  });

  /** The start of an MP4 video (an `ftyp` box): a type the service does not take. */
  const mp4 = '\0\0\0\x18ftypmp42\0\0\0\0mp42isom';

  it('skips an oversized part of another type: counted and hashed, never stored', async () => {
    const message = generatedMessage(3 * 1024 * 1024, 'holiday.mp4', {
      contentType: 'video/mp4',
      magic: mp4,
    });
    const store = createMemoryStore({ keepBytes: false });
    const result = await walkMessage(message.stream, store, { ...defaultLimits, maxPartSize: 1_000_000 });
    expect(result.parts[1]).toMatchObject({
      fileName: 'holiday.mp4',
      size: 3 * 1024 * 1024,
      sha256: message.attachmentSha256(),
      detectedType: null,
      bytesType: 'video/mp4',
      stored: false,
    });
    expect(store.parts.size).toBe(0);
    expect(message.bytesGiven()).toBe(message.totalBytes);
  });

  it('decides from the bytes before the limit when the limit is below the type-detection head', async () => {
    // maxPartSize under HEAD_BYTES: the type is read from the first 1000 bytes, not the first 256 KiB.
    const video = generatedMessage(300_000, 'clip.mp4', { contentType: 'video/mp4', magic: mp4 });
    const skipped = await walkMessage(video.stream, createMemoryStore(), {
      ...defaultLimits,
      maxPartSize: 1000,
    });
    expect(skipped.parts[1]).toMatchObject({ size: 300_000, bytesType: 'video/mp4', stored: false });

    const pdf = generatedMessage(300_000, 'scan.pdf');
    const store = createMemoryStore();
    const err = await refusal(pdf.stream, store, { maxPartSize: 1000 });
    expect(err.message).toBe('attachment "scan.pdf" is larger than the 0.001 MB the parsing service accepts');
    expect(store.parts.size).toBe(0);
  });

  it('refuses an oversized part of a supported type whatever it is declared as', async () => {
    const message = generatedMessage(2_000_000, 'scan.bin', { contentType: 'application/octet-stream' });
    const err = await refusal(message.stream, createMemoryStore({ keepBytes: false }), {
      maxPartSize: 1_000_000,
    });
    expect(err.code).toBe('PART_TOO_LARGE');
    expect(err.message).toContain('"scan.bin"');
  });

  it('takes a part of exactly maxPartSize bytes', async () => {
    const message = generatedMessage(1_000_000);
    const result = await walkMessage(message.stream, createMemoryStore({ keepBytes: false }), {
      ...defaultLimits,
      maxPartSize: 1_000_000,
    });
    expect(result.parts[1]).toMatchObject({
      size: 1_000_000,
      sha256: message.attachmentSha256(),
      stored: true,
    });
  });
});

describe('walkMessage: failures', () => {
  it('rejects with the source error and discards what it stored', async () => {
    const text = mailFixtureText('every-format.eml');
    const cut = text.indexOf('name="ledger.xls"');
    // The first half of the message, then a connection that neither sends nor ends.
    const source = new Readable({
      read() {
        // Nothing more to give until the test destroys the stream.
      },
    });
    source.push(Buffer.from(text.slice(0, cut), 'latin1'));
    const store = createMemoryStore();
    const walking = walkMessage(source, store, defaultLimits);
    await once(store.events, 'write');
    source.destroy(new Error('connection reset'));
    await expect(walking).rejects.toThrow('connection reset');
    expect(states(store).length).toBeGreaterThan(0);
    expect(states(store).every((state) => state === 'discarded')).toBe(true);
  });

  it('rejects, rather than waiting forever, when the caller destroys the source', async () => {
    const message = generatedMessage(4 * 1024 * 1024);
    const store = createMemoryStore({ keepBytes: false });
    store.holdWrites();
    const walking = walkMessage(message.stream, store, defaultLimits);
    await once(store.events, 'write');
    message.stream.destroy();
    store.releaseWrites();
    await expect(walking).rejects.toThrow(/premature close/i);
    expect(states(store)).toEqual(['discarded']);
  });

  it('rejects with the store error and keeps reading the source to its end', async () => {
    const message = generatedMessage(2 * 1024 * 1024);
    const failing: PartStore = {
      recordSpan: () => undefined,
      openPart: () => ({
        write: async () => {
          throw new Error('redis down');
        },
        end: async () => undefined,
        discard: async () => undefined,
      }),
    };
    await expect(walkMessage(message.stream, failing, defaultLimits)).rejects.toThrow('redis down');
    await finished(message.stream);
    expect(message.bytesGiven()).toBe(message.totalBytes);
  });
});
