import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeLoopbackPort, spawnRedisServer, stopRedisServer } from '../src/redis/local-redis-server.ts';

export interface RedisServerOptions {
  /** Extra `--name value` arguments, e.g. `{ appendonly: 'yes' }`. */
  config?: Record<string, string>;
}

/**
 * A private redis-server for one test file: its own port and data directory, never 6379.
 * `stop()` (a crash: SIGKILL) and `start()` let a test take Redis away and bring it back on
 * the same port; `freeze()` (SIGSTOP) leaves its connections open and unanswered, as a hung
 * server or a dead link does, until `thaw()`.
 */
export interface TestRedis {
  readonly port: number;
  readonly url: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  freeze(): void;
  thaw(): void;
  close(): Promise<void>;
}

export async function startRedis(options: RedisServerOptions = {}): Promise<TestRedis> {
  const port = await freeLoopbackPort();
  const dir = await mkdtemp(join(tmpdir(), 'ingest-redis-'));
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--save',
    '',
    '--appendonly',
    'no',
  ];
  args.push('--maxmemory-policy', 'noeviction');
  for (const [name, value] of Object.entries(options.config ?? {})) args.push(`--${name}`, value);
  let child: ChildProcess | undefined;

  async function start(): Promise<void> {
    child ??= await spawnRedisServer(args);
  }
  async function stop(): Promise<void> {
    const running = child;
    child = undefined;
    if (running) await stopRedisServer(running, 'SIGKILL');
  }

  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    start,
    stop,
    freeze: () => child?.kill('SIGSTOP'),
    thaw: () => child?.kill('SIGCONT'),
    async close() {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
