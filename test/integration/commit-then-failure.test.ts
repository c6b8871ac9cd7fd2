import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogSink } from '../../harness/gateway-harness.ts';
import { startRedis, type TestRedis } from '../../harness/redis-server.ts';
import { createLogger } from '../../src/logger.ts';
import { createProducer } from '../../src/queue/producer.ts';
import { createUploadQueue } from '../../src/queue/upload-queue.ts';
import { createKeySpace } from '../../src/record/keys.ts';
import { createMessageIndex } from '../../src/record/message-index.ts';
import { createMessageLedger } from '../../src/record/message-ledger.ts';
import type { AttachmentEntry, MessageSummary } from '../../src/record/message-record.ts';
import { openIncomingMessage } from '../../src/store/message-store.ts';
import { rawCopyLength, readRawRange } from '../../src/store/raw-copy.ts';

const now = '2026-11-24T00:00:00.000Z';

function summary(id: string): MessageSummary {
  return {
    id,
    messageId: null,
    receivedAt: now,
    remoteAddress: '192.0.2.1',
    envelope: { mailFrom: 'ann@acme.example', rcptTo: ['documents@ingest.test'] },
    from: 'ann@acme.example',
    subject: 'after the commit',
    sourceEmail: `http://gw.test/v1/messages/${id}/raw`,
    sourceEmailAddress: 'ann@acme.example',
    size: 11,
    workspaces: [{ identifier: 'ws', admitted: true, reason: null }],
    authentication: null,
  };
}

const skipped: AttachmentEntry = {
  entry: 0,
  part: 1,
  fileName: 'a.zip',
  contentType: 'application/zip',
  detectedType: null,
  size: 22,
  sha256: 'a'.repeat(64),
  workspace: null,
  state: 'skipped',
  reason: 'unsupported type',
  documentIdentifier: null,
  attempts: 0,
  warnings: [],
  updatedAt: now,
};

/**
 * A step of the enqueue that fails after the commit (here WAITAOF, which a Redis without AOF
 * refuses) answers 451; the intake then discards the message, and that must not take the raw
 * copy the committed record serves as sourceEmail.
 */
describe('a failure after the commit', () => {
  let server: TestRedis;
  let redis: Redis;
  const keys = createKeySpace('aftercommit');
  const logger = createLogger({ level: 'silent', destination: new LogSink() });

  beforeAll(async () => {
    server = await startRedis({ config: { appendonly: 'no' } });
    redis = new Redis(server.url, { maxRetriesPerRequest: null });
  });
  afterAll(async () => {
    redis?.disconnect();
    await server?.close();
  });

  it('keeps the raw copy, and the sender’s retry finishes the same message', async () => {
    const queue = createUploadQueue({
      connection: redis,
      keys,
      attempts: 3,
      retention: { completedJobs: 60, failedJobs: 60 },
    });
    try {
      const ledger = createMessageLedger(redis, keys, 3600);
      const index = createMessageIndex(redis, keys, 3600);
      const options = {
        redis,
        queueRedis: redis,
        keys,
        queue,
        ledger,
        index,
        logger,
        messageTtlSeconds: 3600,
        heldTtlSeconds: 3600,
      };
      const waiting = createProducer({ ...options, waitAofTimeout: 100 });
      const incoming = openIncomingMessage(redis, keys, 'm1');
      await incoming.raw.write(Buffer.from('Subject: x\r\n'));
      await incoming.raw.end();
      const message = { incoming, summary: summary('m1'), entries: [skipped], deliveryHash: 'd'.repeat(64) };

      await expect(waiting.enqueue(message)).rejects.toThrow(/WAITAOF/);
      await incoming.discard(); // what the intake does with any failure
      expect(await redis.exists(keys.message('m1').raw)).toBe(1);

      const retry = openIncomingMessage(redis, keys, 'm2');
      await retry.raw.write(Buffer.from('Subject: x\r\n'));
      await retry.raw.end();
      const result = await createProducer({ ...options, waitAofTimeout: null }).enqueue({
        ...message,
        incoming: retry,
        summary: summary('m2'),
      });
      expect(result).toEqual({ messageId: 'm1', duplicate: true });
      expect(await readRawRange(redis, keys.message('m1').raw, 0, 12)).toEqual(Buffer.from('Subject: x\r\n'));
      expect(await rawCopyLength(redis, keys.message('m1').raw)).toBe(12);
      expect(await redis.exists(keys.message('m2').raw)).toBe(0);
      expect((await ledger.read('m1'))?.status).toBe('enqueued');
    } finally {
      await queue.close();
    }
  });
});
