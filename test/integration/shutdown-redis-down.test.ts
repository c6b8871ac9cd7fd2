import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonProcess, startDaemon, writeDaemonConfig } from '../../harness/daemon-process.ts';
import { startRedis, type TestRedis } from '../../harness/redis-server.ts';

/**
 * A coarse bound, ms: docker compose SIGKILLs the gateway 45 s after SIGTERM
 * (stop_grace_period). A stop that waits for nothing takes seconds, more on busy cores.
 */
const WITHIN_GRACE_MS = 45_000;
/**
 * The close timeouts, ms: out of the bound's reach, so a stop that waits one out for Redis
 * fails the test however fast or slow the machine.
 */
const CLOSE_TIMEOUT_MS = 600_000;

/**
 * SIGTERM while Redis is away (a crashed server refuses connections; a frozen one, or a dead
 * link, keeps them open and never answers): with no upload in flight nothing can be finished,
 * so the daemon does not wait for Redis, and exits 0.
 */
describe('stopping while Redis is down', () => {
  let dir: string;
  let redis: TestRedis | undefined;
  let daemon: DaemonProcess | undefined;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'stop-redis-down-'));
  });
  afterEach(async () => {
    // A daemon a failed test left running; signalling one that has exited changes nothing.
    daemon?.signal('SIGKILL');
    await daemon?.exited;
    daemon = undefined;
    await redis?.close();
    redis = undefined;
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it.each([
    { down: 'killed', takeAway: (server: TestRedis) => server.stop() },
    { down: 'frozen', takeAway: async (server: TestRedis) => server.freeze() },
  ])(
    'exits 0 within the grace period when Redis was $down',
    async ({ down, takeAway }) => {
      redis = await startRedis();
      const configPath = join(dir, `${down}.yaml`);
      // Completion tracking on: its worker and connection are closed too.
      await writeDaemonConfig(configPath, {
        smtp: { closeTimeout: CLOSE_TIMEOUT_MS },
        upload: { closeTimeout: CLOSE_TIMEOUT_MS },
        redis: { url: redis.url, prefix: down },
        api: { mock: true },
        workspaces: [{ identifier: 'ws', ingestEmail: 'documents@ingest.test', trackCompletion: true }],
      });
      daemon = await startDaemon(configPath);
      await takeAway(redis);

      daemon.signal('SIGTERM');
      const timer = new AbortController();
      const outcome = await Promise.race([
        daemon.exited,
        sleep(WITHIN_GRACE_MS, 'still running' as const, { signal: timer.signal }),
      ]);
      timer.abort();
      expect(outcome).toBe(0);
      // Stopped step by step, not cut off by the daemon's own shutdown deadline.
      expect(daemon.lines.some((line) => line.includes('"msg":"stopped"'))).toBe(true);
    },
    120_000,
  );
});
