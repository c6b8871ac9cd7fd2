import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { startDaemon } from '../../harness/daemon-process.ts';
import { startRedis, type TestRedis } from '../../harness/redis-server.ts';
import { type BenchConfigOptions, benchConfigFile } from '../bench-config.ts';
import type { BenchServer } from './bench-server.ts';

/**
 * The gateway as the benchmark runs it: `ingest-gateway start --role <role>` in its own
 * process, built to JavaScript as the image runs it (dist/cli.js, built afresh once per
 * benchmark run), on a redis-server of its own (AOF, fsync every second, as the README asks of
 * production), with the generated bench configuration.
 */
export interface GatewayUnderBench extends BenchServer {
  readonly redis: Redis;
  readonly redisUrl: string;
  readonly httpUrl: string;
  /** `used_memory` of its redis-server, in bytes. */
  redisUsedMemory(): Promise<number>;
}

export interface GatewayStartOptions extends Omit<BenchConfigOptions, 'redisUrl'> {
  role?: 'smtp' | 'worker' | 'all';
  /** A Redis to share (scale-out); absent: a private redis-server, closed with the gateway. */
  redisUrl?: string;
  /** More environment, e.g. NODE_OPTIONS for --cpu-prof. */
  env?: Record<string, string>;
  /** How the tables name it; default `ingest-gateway --role <role>`. */
  name?: string;
}

let built: Promise<string> | undefined;

/** Builds dist/ from the sources of this checkout, once per process; resolves with its cli.js. */
export function buildGateway(): Promise<string> {
  built ??= promisify(execFile)(process.execPath, [
    new URL('../../scripts/build.ts', import.meta.url).pathname,
  ]).then(() => new URL('../../dist/cli.js', import.meta.url).pathname);
  return built;
}

/** The process id of the redis-server a client is connected to (its CPU counts with its server's). */
export async function redisServerPid(client: Redis): Promise<number> {
  return Number(/process_id:(\d+)/.exec(await client.info('server'))?.[1] ?? 0);
}

/** A private redis-server with the durability production needs (AOF, noeviction). */
export function startBenchRedis(): Promise<TestRedis> {
  return startRedis({
    config: {
      appendonly: 'yes',
      appendfsync: 'everysec',
      // A rewrite forks a second redis-server onto the pinned core mid-run; the runs are short
      // and the AOF is thrown away after, so the file is left to grow.
      'auto-aof-rewrite-percentage': '0',
    },
  });
}

/**
 * Returns a bench redis-server to where a deployment's stays: what earlier runs stored gone
 * (FLUSHALL) and its AOF rewritten small (BGREWRITEAOF, waited for), outside any measured run.
 * Without it the runs pile up: three rounds leave each redis-server with over 2 GB and an AOF
 * as big, and on a virtual machine whose host backs guest memory only as the guest's use grows,
 * every page Redis or its AOF's page cache takes costs more the more the guest already holds
 * (the gateway's redis-server on 5 MB messages, same load, no reset: 7.5, 8.0, 19.3, then 42.0
 * ms of kernel time per message as its data went from 0.4 to 1.4 GB; with the reset 7.3-7.8
 * every time, bench/README.md). A deployment's Redis does not grow so: uploaded messages'
 * documents are released, records expire, and Redis rewrites its AOF as it doubles.
 */
export async function emptyBenchRedis(client: Redis): Promise<void> {
  await client.flushall();
  await client.bgrewriteaof();
  const rewriting = /aof_rewrite_(?:in_progress|scheduled):1/;
  while (rewriting.test(await client.info('persistence'))) await new Promise((wake) => setTimeout(wake, 50));
}

export async function startGatewayProcess(options: GatewayStartOptions): Promise<GatewayUnderBench> {
  const entry = await buildGateway();
  const ownRedis = options.redisUrl === undefined ? await startBenchRedis() : null;
  const redisUrl = options.redisUrl ?? ownRedis?.url ?? '';
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  const dir = await mkdtemp(join(tmpdir(), 'bench-gateway-'));
  const configPath = join(dir, 'gateway.yaml');
  const cleanUp = async () => {
    redis.disconnect();
    await Promise.allSettled([ownRedis?.close(), rm(dir, { recursive: true, force: true })]);
  };
  try {
    await redis.connect();
    const redisPid = await redisServerPid(redis);
    await writeFile(configPath, benchConfigFile({ ...options, redisUrl }).text);
    // At info, as deployed (LOG_LEVEL, which wins over the file): one line per accepted message,
    // which the harness also reads for the ready line.
    const daemon = await startDaemon(
      configPath,
      options.role ?? 'smtp',
      'info',
      gatewayEnv(options.env ?? {}),
      entry,
    );
    const role = options.role ?? 'smtp';
    return {
      name: options.name ?? `ingest-gateway --role ${role}`,
      port: daemon.smtpPort,
      pids: ownRedis ? [daemon.pid, redisPid] : [daemon.pid],
      redis,
      redisUrl,
      httpUrl: daemon.httpUrl,
      async accepted() {
        return counterValue(await metrics(daemon.httpUrl), 'ingest_gateway_smtp_messages_total', 'accepted');
      },
      // Only a redis-server of its own is emptied: a shared one (scale-out) holds the others' messages.
      ...(ownRedis ? { reset: () => emptyBenchRedis(redis) } : {}),
      async redisUsedMemory() {
        return Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1] ?? 0);
      },
      async close() {
        daemon.signal('SIGTERM');
        await daemon.exited;
        await cleanUp();
      },
    };
  } catch (err) {
    await cleanUp();
    throw err;
  }
}

/** The Node options the container image runs the gateway with (Dockerfile, ENTRYPOINT). */
const IMAGE_NODE_OPTIONS = '--max-semi-space-size=4';

/** glibc's malloc arenas as the image sets them (Dockerfile, ENV MALLOC_ARENA_MAX). */
const IMAGE_MALLOC_ARENA_MAX = '2';

/**
 * The gateway's environment as the image sets it: `env`, with glibc's MALLOC_ARENA_MAX
 * (BENCH_GATEWAY_MALLOC_ARENA_MAX instead when set; empty for glibc's default) and the image's
 * Node options, or BENCH_GATEWAY_NODE_OPTIONS (from the benchmark's own environment) instead
 * when it is set, added to its NODE_OPTIONS, so that a setting can be weighed on the gateway
 * alone, the peers and the load running as always (BENCH_GATEWAY_NODE_OPTIONS=' ' runs it with
 * V8's defaults).
 */
function gatewayEnv(env: Record<string, string>): Record<string, string> {
  const arenas = (process.env.BENCH_GATEWAY_MALLOC_ARENA_MAX ?? IMAGE_MALLOC_ARENA_MAX).trim();
  const withArenas = arenas ? { MALLOC_ARENA_MAX: arenas, ...env } : env;
  const extra = (process.env.BENCH_GATEWAY_NODE_OPTIONS ?? IMAGE_NODE_OPTIONS).trim();
  if (!extra) return withArenas;
  return { ...withArenas, NODE_OPTIONS: [env.NODE_OPTIONS, extra].filter(Boolean).join(' ') };
}

async function metrics(httpUrl: string): Promise<string> {
  const response = await fetch(new URL('/metrics', httpUrl));
  if (!response.ok) throw new Error(`GET /metrics: ${response.status}`);
  return response.text();
}

/** The sum of a Prometheus counter's samples whose `outcome` label is `outcome`. */
export function counterValue(text: string, name: string, outcome: string): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) || !line.includes(`outcome="${outcome}"`)) continue;
    total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}
