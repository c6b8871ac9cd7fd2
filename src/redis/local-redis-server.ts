import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import type { Logger } from '../logger.ts';
import { PROBE_OPTIONS } from './connections.ts';

/**
 * For local development: a redis-server the gateway starts itself when none answers, and
 * stops when it stops. Its data (AOF, everysec) stays in `dataDir`, so mail accepted in one
 * run is still queued in the next.
 */
export interface LocalRedis {
  url: string;
  stop(): Promise<void>;
}

/** Whether a Redis answers PING at `url` within a short wait. */
export async function redisAnswers(url: string): Promise<boolean> {
  const probe = new Redis(url, PROBE_OPTIONS);
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

export function redisServerInstalled(): boolean {
  return spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;
}

export async function startLocalRedis(dataDir: string, logger: Logger): Promise<LocalRedis> {
  await mkdir(dataDir, { recursive: true });
  const port = await freeLoopbackPort();
  const child = await spawnRedisServer([
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dataDir,
    '--appendonly',
    'yes',
    '--appendfsync',
    'everysec',
    '--save',
    '',
    '--maxmemory-policy',
    'noeviction',
  ]);
  const url = `redis://127.0.0.1:${port}`;
  logger.info({ url, dataDir }, 'started a private redis-server for this gateway');
  return { url, stop: () => stopRedisServer(child) };
}

/**
 * Start redis-server with these arguments; resolves once it prints `readyLine` (a server says
 * it accepts connections; a Sentinel, that it monitors its master).
 */
export async function spawnRedisServer(
  args: readonly string[],
  readyLine = 'Ready to accept connections',
): Promise<ChildProcess> {
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(readyLine)) {
        child.stdout?.off('data', onData);
        child.stdout?.resume();
        child.off('exit', onExit);
        resolve();
      }
    };
    const onExit = (code: number | null) =>
      reject(new Error(`redis-server exited with code ${code}: ${output.slice(-500)}`));
    child.stdout?.on('data', onData);
    child.stderr?.resume();
    child.once('error', reject);
    child.once('exit', onExit);
  });
  return child;
}

/** Stop a redis-server started here: SIGTERM lets it flush its AOF; SIGKILL simulates a crash. */
export async function stopRedisServer(
  child: ChildProcess,
  signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM',
): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  await exited;
}

/** A loopback TCP port that was free a moment ago, for servers that cannot listen on port 0. */
export async function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('no free port'))));
    });
  });
}
