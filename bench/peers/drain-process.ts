import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import type { BenchServer } from './bench-server.ts';
import { emptyBenchRedis, redisServerPid, startBenchRedis } from './gateway-process.ts';

/**
 * bench/peers/drain-server.ts in a process of its own, answering its count on request. With
 * `store`, it stores every message once in a redis-server of its own (the gateway's
 * durability settings), whose CPU counts with the server's, as the gateway's does.
 */
export async function startDrainProcess(
  options: {
    store?: boolean;
    /** More environment, e.g. NODE_OPTIONS for --cpu-prof. */
    env?: Record<string, string>;
  } = {},
): Promise<BenchServer> {
  const redis = options.store ? await startBenchRedis() : undefined;
  // The benchmark's own connection to that redis-server: its process id, and the reset before each run.
  const client =
    redis === undefined ? undefined : new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await client?.connect();
  const redisPid = client === undefined ? undefined : await redisServerPid(client);
  const child: ChildProcess = spawn(
    process.execPath,
    [new URL('drain-server.ts', import.meta.url).pathname, '0', ...(redis ? [redis.url] : [])],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
      env: { ...process.env, ...options.env },
    },
  );
  const { stdin, stdout } = child;
  if (!stdin || !stdout) throw new Error('drain server: no pipes');
  const exited = once(child, 'exit');
  const lines = createInterface({ input: stdout })[Symbol.asyncIterator]();
  const next = async (): Promise<Record<string, number>> => {
    const line = await lines.next();
    if (line.done) throw new Error('the drain server exited');
    return JSON.parse(line.value) as Record<string, number>;
  };
  const { port } = await next();
  if (port === undefined || child.pid === undefined) throw new Error('the drain server did not say its port');
  return {
    name: redis ? 'smtp-server storing DATA once in Redis' : 'smtp-server draining DATA',
    port,
    pids: redisPid === undefined ? [child.pid] : [child.pid, redisPid],
    async accepted() {
      stdin.write('count\n');
      return (await next()).accepted ?? 0;
    },
    ...(client === undefined ? {} : { reset: () => emptyBenchRedis(client) }),
    async close() {
      stdin.end('close\n');
      await exited;
      client?.disconnect();
      await redis?.close();
    },
  };
}
