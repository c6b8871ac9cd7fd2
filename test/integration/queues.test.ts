import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogSink } from '../../harness/gateway-harness.ts';
import { startRedis, type TestRedis } from '../../harness/redis-server.ts';
import { createLogger } from '../../src/logger.ts';
import { openQueues, type QueuesOptions } from '../../src/queue/queues.ts';
import { createKeySpace } from '../../src/record/keys.ts';
import { closeConnection, createIntakeConnection, type RedisClient } from '../../src/redis/connections.ts';
import { createRedisOutageLog } from '../../src/redis/outage-log.ts';

/** The one factory of the BullMQ queues, against a real Redis. */
describe('queues of one connection', () => {
  let redis: TestRedis;
  let admin: Redis;
  const logs = new LogSink();
  const logger = createLogger({ level: 'debug', destination: logs });
  const keys = createKeySpace('queues-test');
  const upload = { fileName: 'a.pdf', contentType: 'application/pdf', size: 1, sha256: 'f'.repeat(64) };

  const options = (connection: RedisClient, outage: QueuesOptions['outage']): QueuesOptions => ({
    connection,
    keys,
    attempts: 3,
    retention: { completedJobs: 60, failedJobs: 120 },
    logger,
    outage,
    user: 'queues test',
  });

  beforeAll(async () => {
    redis = await startRedis();
    admin = new Redis(redis.url);
  });
  afterAll(async () => {
    admin?.disconnect();
    await redis?.close();
  });

  it('builds each queue once, under the key prefix, with the upload settings as job defaults', async () => {
    const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
    const queues = openQueues(options(connection, null));
    try {
      expect(queues.uploads).toBe(queues.uploads);
      expect(queues.completion).toBe(queues.completion);
      const job = await queues.uploads.add('upload', {
        messageId: 'm1',
        entry: 0,
        workspace: 'ws',
        ...upload,
      });
      expect(job.opts.attempts).toBe(3);
      expect(job.opts.removeOnFail).toEqual({ age: 120 });
      await queues.completion.add('poll', {
        messageId: 'm1',
        entry: 0,
        workspace: 'ws',
        documentIdentifier: 'd1',
        uploadedAt: 0,
        polls: 0,
      });
      const written = await admin.keys(`${keys.queuePrefix}:*`);
      expect(written.some((key) => key.startsWith(`${keys.queuePrefix}:uploads:`))).toBe(true);
      expect(written.some((key) => key.startsWith(`${keys.queuePrefix}:completion:`))).toBe(true);
    } finally {
      await queues.close();
      connection.disconnect();
    }
  });

  it('closes every queue it built, once however often it is asked', async () => {
    const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
    const queues = openQueues(options(connection, null));
    const { uploads, completion } = queues;
    const first = queues.close();
    expect(queues.close()).toBe(first);
    await first;
    expect(uploads.closing).toBeDefined();
    expect(completion.closing).toBeDefined();
    connection.disconnect();
  });

  it('logs a queue error naming the queue and its user, unless the outage log takes it', async () => {
    const outage = createRedisOutageLog({ logger });
    const connection = createIntakeConnection(redis.url, outage, 'queues-test');
    const queues = openQueues(options(connection, outage));
    try {
      const from = logs.lines.length;
      queues.uploads.emit('error', new Error('a script failed'));
      const logged = logs.lines
        .slice(from)
        .filter((line) => line.includes('upload queue error (queues test)'));
      expect(logged).toHaveLength(1);
      expect(logged[0]).toContain('a script failed');

      // While Redis is away, the outage log counts such errors instead of one line each.
      outage.lost('queues-test', Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
      const during = logs.lines.length;
      queues.completion.emit(
        'error',
        Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      );
      expect(logs.lines.slice(during).filter((line) => line.includes('queue error'))).toEqual([]);
    } finally {
      await queues.close();
      await closeConnection(connection);
    }
  });
});
