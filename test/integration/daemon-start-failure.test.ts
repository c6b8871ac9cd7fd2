import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, writeDaemonConfig } from '../../harness/daemon-process.ts';
import { startRedis, type TestRedis } from '../../harness/redis-server.ts';
import { freeLoopbackPort } from '../../src/redis/local-redis-server.ts';

/** A start that fails half-way closes what it had started and exits 1, saying why. */
describe('a daemon that cannot start', () => {
  let redis: TestRedis;
  let dir: string;

  beforeAll(async () => {
    // Eviction can drop accepted mail: the gateway refuses such a Redis after connecting to it.
    redis = await startRedis({ config: { 'maxmemory-policy': 'allkeys-lru' } });
    dir = await mkdtemp(join(tmpdir(), 'start-failure-'));
  });
  afterAll(async () => {
    await redis?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('exits 1 with the reason after the in-process mock API it started is closed', async () => {
    const configPath = join(dir, 'evicting.yaml');
    await writeDaemonConfig(configPath, {
      redis: { url: redis.url },
      api: { mock: true },
      workspaces: [{ identifier: 'ws', ingestEmail: 'documents@ingest.test' }],
    });
    const failure = await startDaemon(configPath, 'all', 'debug').then(
      () => new Error('the daemon started'),
      (err: unknown) => err as Error,
    );
    expect(failure.message).toMatch(/the daemon exited \(1\) before it was ready/);
    const lines = failure.message.split('\n');
    const fatal = lines.findIndex((line) => line.includes('the gateway could not start'));
    expect(fatal).toBeGreaterThan(-1);
    expect(lines[fatal]).toMatch(/maxmemory-policy is allkeys-lru/);
    // What had started is closed, last started first; no step failed or was left running.
    // Ordered by each line's own clock, not by arrival: lines written within a millisecond of
    // each other have been seen to reach the pipe out of order.
    const closed = lines
      .flatMap((line) => {
        const step = line.match(/"step":"([^"]+)","msg":"shutdown step done"/)?.[1];
        const time = Number(line.match(/"time":(\d+)/)?.[1]);
        return step === undefined ? [] : [{ step, time }];
      })
      .sort((a, b) => a.time - b.time)
      .map(({ step }) => step);
    expect(closed).toEqual(['redis', 'mock api']);
    expect(lines.filter((line) => /shutdown step failed|shutdown deadline/.test(line))).toEqual([]);
  }, 30_000);

  it('exits 1 naming the seeds when no node of the configured Redis Cluster answers', async () => {
    const configPath = join(dir, 'no-cluster.yaml');
    // A plain Redis is no cluster node, and nothing listens on the other seed.
    const seeds = [`127.0.0.1:${redis.port}`, `127.0.0.1:${await freeLoopbackPort()}`];
    await writeDaemonConfig(configPath, {
      redis: { cluster: seeds },
      api: { mock: true },
      workspaces: [{ identifier: 'ws', ingestEmail: 'documents@ingest.test' }],
    });
    const failure = await startDaemon(configPath).then(
      () => new Error('the daemon started'),
      (err: unknown) => err as Error,
    );
    expect(failure.message).toMatch(/the daemon exited \(1\) before it was ready/);
    expect(failure.message).toContain(`no node of the Redis Cluster answers at ${seeds.join(', ')}`);
  }, 30_000);
});
