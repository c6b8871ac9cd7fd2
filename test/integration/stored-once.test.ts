import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { multipartMessage, uniquePdf } from '../../harness/messages.ts';
import { startRedis, type TestRedis } from '../../harness/redis-server.ts';
import { deliver, queuedId } from '../../harness/smtp-session.ts';
import { createKeySpace } from '../../src/record/keys.ts';
import {
  createRawCopyWriter,
  RAW_CHUNK_BYTES,
  rawCopyLength,
  readRawRange,
} from '../../src/store/raw-copy.ts';
import { isDocumentStored, readStoredDocument } from '../../src/store/stored-document.ts';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('a document stored as its span of the raw copy', () => {
  let server: TestRedis;
  let redis: Redis;
  const keys = createKeySpace('stored');
  const pdf = uniquePdf('span');
  const body = pdf.toString('base64').replace(/.{76}/g, '$&\r\n');
  const raw = Buffer.from(`Subject: x\r\nContent-Transfer-Encoding: base64\r\n\r\n${body}\r\n`, 'latin1');
  const start = raw.indexOf('\r\n\r\n') + 4;
  const span = { start, end: raw.length - 2, encoding: 'base64' };
  const message = keys.message('m1');

  beforeAll(async () => {
    server = await startRedis();
    redis = new Redis(server.url);
  });
  afterAll(async () => {
    redis.disconnect();
    await server.close();
  });

  it('is decoded from the raw copy with the walk decoder and checked against its SHA-256', async () => {
    const writer = createRawCopyWriter(redis, message.raw);
    await writer.write(raw);
    await writer.end();
    await redis.set(message.span(sha256(pdf)), JSON.stringify(span));
    const ref = { messageId: 'm1', sha256: sha256(pdf) };
    expect(await readStoredDocument(redis, keys, ref)).toEqual(pdf);
    expect(await isDocumentStored(redis, keys, ref)).toBe(true);
  });

  it('fails loudly, never with other bytes, when the raw copy does not hold them', async () => {
    const wrong = { messageId: 'm1', sha256: 'f'.repeat(64) };
    await redis.set(message.span(wrong.sha256), JSON.stringify(span));
    await expect(readStoredDocument(redis, keys, wrong)).rejects.toThrow(
      /decodes from the raw copy to other bytes/,
    );
    await redis.set(message.span(wrong.sha256), JSON.stringify({ ...span, end: raw.length + 10 }));
    await expect(readStoredDocument(redis, keys, wrong)).rejects.toThrow(/does not hold bytes/);
    await redis.set(message.span(wrong.sha256), '{"start":1}');
    await expect(readStoredDocument(redis, keys, wrong)).rejects.toThrow(/is unreadable/);
  });

  it('reads a blob of its own first, and answers null once neither is stored', async () => {
    const ref = { messageId: 'm2', sha256: sha256(Buffer.from('blob bytes')) };
    expect(await readStoredDocument(redis, keys, ref)).toBeNull();
    expect(await isDocumentStored(redis, keys, ref)).toBe(false);
    await redis.set(keys.message('m2').blob(ref.sha256), 'blob bytes');
    expect(await readStoredDocument(redis, keys, ref)).toEqual(Buffer.from('blob bytes'));
  });
});

describe('the raw copy, a hash of fixed-size chunks', () => {
  let server: TestRedis;
  let redis: Redis;

  beforeAll(async () => {
    server = await startRedis();
    redis = new Redis(server.url);
  });
  afterAll(async () => {
    redis.disconnect();
    await server.close();
  });

  it('gives back any range of what was written, in writes of any size', async () => {
    const bytes = Buffer.from(
      Array.from({ length: 3 * RAW_CHUNK_BYTES + 1234 }, (_, at) => (at * 7919) % 251),
    );
    const writer = createRawCopyWriter(redis, 'copy');
    for (let at = 0, size = 1; at < bytes.length; at += size, size = (size * 3 + 17) % 300_000)
      await writer.write(bytes.subarray(at, at + size));
    await writer.end();
    expect(writer.bytes).toBe(bytes.length);
    expect(await redis.hlen('copy')).toBe(4);
    expect(await rawCopyLength(redis, 'copy')).toBe(bytes.length);
    for (const [start, end] of [
      [0, bytes.length],
      [RAW_CHUNK_BYTES - 5, RAW_CHUNK_BYTES + 5],
      [10, 20],
      [2 * RAW_CHUNK_BYTES, 3 * RAW_CHUNK_BYTES + 1234],
      [7, 7],
    ] as const)
      expect(await readRawRange(redis, 'copy', start, end)).toEqual(bytes.subarray(start, end));
    await expect(readRawRange(redis, 'copy', 0, bytes.length + 1)).rejects.toThrow(/does not hold bytes/);
    expect(await rawCopyLength(redis, 'nothing')).toBe(0);
  });

  it('costs Redis little more than its bytes', async () => {
    const writer = createRawCopyWriter(redis, 'big');
    const size = 7 * 1024 * 1024 + 12_345;
    for (let at = 0; at < size; at += 65_536)
      await writer.write(Buffer.alloc(Math.min(65_536, size - at), 0x41));
    await writer.end();
    const usage = Number(await redis.call('MEMORY', 'USAGE', 'big', 'SAMPLES', '0'));
    expect(usage / size).toBeLessThan(1.01);
  });

  it('is deleted whole when discarded', async () => {
    const writer = createRawCopyWriter(redis, 'gone');
    await writer.write(Buffer.alloc(RAW_CHUNK_BYTES * 2, 1));
    await writer.discard();
    expect(await redis.exists('gone')).toBe(0);
  });
});

describe('an accepted message is stored once', () => {
  let harness: Harness;
  let redis: Redis;

  beforeAll(async () => {
    // No worker: the message stays as the commit left it.
    harness = await startHarness({ role: 'smtp' });
    redis = new Redis(harness.redis.url);
  });
  afterAll(async () => {
    redis.disconnect();
    await harness.close();
  });

  it('keeps the raw copy and, per document, only where it lies in it', async () => {
    const first = uniquePdf('once-a');
    const second = uniquePdf('once-b');
    const message = multipartMessage([
      ['a.pdf', 'application/pdf', first],
      ['b.pdf', 'application/pdf', second],
    ]);
    const { data } = await deliver(harness.smtpPort, { to: ['documents@ingest.test'], message });
    const id = queuedId(data);
    const keys = createKeySpace(harness.config.redis.prefix);
    const messageKeys = keys.message(id);
    const stored = (await redis.keys(`${harness.config.redis.prefix}:{${id}}:*`)).sort();
    expect(stored).toEqual(
      [
        messageKeys.raw,
        messageKeys.record,
        messageKeys.span(sha256(first)),
        messageKeys.span(sha256(second)),
        messageKeys.blobRefs(sha256(first)),
        messageKeys.blobRefs(sha256(second)),
      ].sort(),
    );
    // The bytes are in Redis once: every key but the raw copy is small.
    expect(await rawCopyLength(redis, messageKeys.raw)).toBe(message.length);
    for (const sha of [sha256(first), sha256(second)])
      expect(await redis.strlen(messageKeys.span(sha))).toBeLessThan(200);
    expect(await readStoredDocument(redis, keys, { messageId: id, sha256: sha256(first) })).toEqual(first);
    expect(await readStoredDocument(redis, keys, { messageId: id, sha256: sha256(second) })).toEqual(second);
  });
});
