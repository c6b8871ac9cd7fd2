import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isDocumentStored, readStoredDocument } from '../../src/queue/stored-document.ts';
import { createKeySpace } from '../../src/record/keys.ts';
import { type Harness, startHarness } from '../support/gateway-harness.ts';
import { multipartMessage, uniquePdf } from '../support/messages.ts';
import { startRedis, type TestRedis } from '../support/redis-server.ts';
import { deliver, queuedId } from '../support/smtp-session.ts';

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
    await redis.set(message.raw, raw);
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
    await expect(readStoredDocument(redis, keys, wrong)).rejects.toThrow(
      /raw copy of m1 ends before document/,
    );
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
    expect(await redis.strlen(messageKeys.raw)).toBe(message.length);
    for (const sha of [sha256(first), sha256(second)])
      expect(await redis.strlen(messageKeys.span(sha))).toBeLessThan(200);
    expect(await readStoredDocument(redis, keys, { messageId: id, sha256: sha256(first) })).toEqual(first);
    expect(await readStoredDocument(redis, keys, { messageId: id, sha256: sha256(second) })).toEqual(second);
  });
});
