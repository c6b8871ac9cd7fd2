import { DelayedError, Job, Queue, UnrecoverableError, WaitingError } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { declaredVersion, EXACT_VERSION, installedManifest } from '../../harness/pinned-version.ts';
import { startRedis, type TestRedis } from '../../harness/redis-server.ts';

/**
 * BullMQ is used through its public API only, but the exactly-once argument
 * (docs/architecture.md, "Exactly once"; docs/overrides.md, "BullMQ") rests on what that API
 * does: adding a job id that exists adds nothing (a repeated delivery finishes an earlier
 * commit), a job counts the runs started (a run after a dead worker's looks before it
 * uploads), and the error classes that fail, hand back or delay a job. An upgrade that changes
 * them fails here.
 */

describe('BullMQ, as the producer and the workers use it', () => {
  let server: TestRedis;
  let connection: Redis;
  let queue: Queue;

  beforeAll(async () => {
    server = await startRedis();
    connection = new Redis(server.url, { maxRetriesPerRequest: null });
    queue = new Queue('contract', { connection, prefix: 'contract:{queue}' });
  });
  afterAll(async () => {
    await queue?.close();
    connection?.disconnect();
    await server?.close();
  });

  it('is installed at the exact version package.json pins', () => {
    expect(declaredVersion('bullmq')).toMatch(EXACT_VERSION);
    expect(installedManifest('bullmq').version).toBe(declaredVersion('bullmq'));
  });

  it('adds nothing for a job id that exists: the first job stays as it was', async () => {
    const first = await queue.add('upload', { n: 1 }, { jobId: 'm1-0' });
    const again = await queue.add('upload', { n: 2 }, { jobId: 'm1-0' });
    expect(again.id).toBe(first.id);
    expect(await queue.getJobCountByTypes('waiting')).toBe(1);
    expect((await queue.getJob('m1-0'))?.data).toEqual({ n: 1 });
  });

  it('counts the runs a job started, from 0 before its first', async () => {
    const job = await Job.fromId(queue, 'm1-0');
    expect(job?.attemptsStarted).toBe(0);
    expect(job?.attemptsMade).toBe(0);
  });

  it('has the signals the upload worker and completion tracking throw', () => {
    expect(new UnrecoverableError('x')).toBeInstanceOf(Error);
    expect(new WaitingError()).toBeInstanceOf(Error);
    expect(new DelayedError()).toBeInstanceOf(Error);
    expect(typeof Job.prototype.moveToWait).toBe('function');
    expect(typeof Job.prototype.moveToDelayed).toBe('function');
  });
});
