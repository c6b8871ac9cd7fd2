import type { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogSink } from '../../harness/gateway-harness.ts';
import { startRedis, type TestRedis } from '../../harness/redis-server.ts';
import { createLogger } from '../../src/logger.ts';
import { createQueueDepthReader } from '../../src/queue/queue-depth.ts';
import { openQueues, type Queues } from '../../src/queue/queues.ts';
import { createUploadQueue, type UploadJobData } from '../../src/queue/upload-queue.ts';
import { createKeySpace } from '../../src/record/keys.ts';
import { closeConnection, createIntakeConnection, type RedisClient } from '../../src/redis/connections.ts';
import { createRedisOutageLog } from '../../src/redis/outage-log.ts';

/** The reader behind the queue gauges, against a real Redis, with the clock in the test's hands. */
describe('queue depth reader', () => {
  let redis: TestRedis;
  let intake: RedisClient;
  let admin: Redis;
  let queue: Queue<UploadJobData>;
  let intakeQueues: Queues;
  const logs = new LogSink();
  const logger = createLogger({ level: 'debug', destination: logs });
  const keys = createKeySpace('depth');

  beforeAll(async () => {
    redis = await startRedis();
    intake = createIntakeConnection(redis.url, createRedisOutageLog({ logger }));
    admin = new Redis(redis.url);
    queue = createUploadQueue({
      connection: admin,
      keys,
      attempts: 1,
      retention: { completedJobs: 60, failedJobs: 60 },
    });
    // The reader's queue on the fail-fast intake connection, as the gateway builds it.
    intakeQueues = openQueues({
      connection: intake,
      keys,
      attempts: 1,
      retention: { completedJobs: 60, failedJobs: 60 },
      logger,
      outage: null,
      user: 'queue depth test',
    });
    await new Promise((resolve) => intake.once('ready', resolve));
  });
  afterAll(async () => {
    await intakeQueues?.close();
    await queue?.close();
    await closeConnection(intake);
    admin?.disconnect();
    await redis?.close();
  });

  const job = (messageId: string): UploadJobData => ({
    messageId,
    entry: 0,
    workspace: 'ws',
    sha256: 'f'.repeat(64),
    fileName: 'a.pdf',
    contentType: 'application/pdf',
    size: 1,
  });

  it('counts jobs by state and ages the oldest waiting one; one reading serves scrapes for cacheMs', async () => {
    let now = Date.now();
    const reader = createQueueDepthReader({
      queue: intakeQueues.uploads,
      logger,
      cacheMs: 5000,
      // Counting is under test here, not giving up: a bound no read reaches on busy cores.
      timeoutMs: 60_000,
      now: () => now,
    });
    try {
      expect(await reader.read()).toEqual({
        counts: { waiting: 0, active: 0, delayed: 0, failed: 0 },
        oldestWaitingSeconds: 0,
      });
      const first = await queue.add('upload', job('first'));
      await queue.add('upload', job('second'));
      await queue.add('upload', job('later'), { delay: 60_000 });

      // Within cacheMs: the same reading, however many scrapes.
      now += 4000;
      expect((await reader.read())?.counts.waiting).toBe(0);
      // Past it: read again; the oldest waiting job is the first added.
      now += 1000;
      const depth = await reader.read();
      expect(depth?.counts).toEqual({ waiting: 2, active: 0, delayed: 1, failed: 0 });
      expect(depth?.oldestWaitingSeconds).toBeCloseTo((now - first.timestamp) / 1000, 3);
    } finally {
      await queue.obliterate({ force: true });
    }
  });

  it('gives up after timeoutMs when Redis does not answer, and says so once', async () => {
    let now = Date.now();
    const reader = createQueueDepthReader({
      queue: intakeQueues.uploads,
      logger,
      timeoutMs: 200,
      now: () => now,
    });
    try {
      // Redis stopped in its tracks (SIGSTOP): a hung server, not a closed connection. Nothing
      // but giving up can end the read, however busy the cores.
      redis.freeze();
      expect(await reader.read()).toBeNull();
      now += 10_000;
      expect(await reader.read()).toBeNull();
      expect(logs.lines.filter((line) => line.includes('upload queue depth not read'))).toHaveLength(1);
    } finally {
      redis.thaw();
    }
  });
});
