import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, openSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { freeLoopbackPort } from '../../src/redis/local-redis-server.ts';
import type { BenchServer } from './bench-server.ts';

const run = promisify(execFile);

/**
 * Haraka accepting every recipient and discarding every message at queue (the plugin
 * bench/peers/haraka/bench_discard.js), one process (`nodes=0`: no cluster), logging at warn
 * so its log costs it less than the gateway's one info line per message costs the gateway.
 * Haraka is a benchmark-only dependency: bench/package.json, installed into
 * bench/node_modules on first use, so the gateway's own install stays lean.
 */

const benchDir = new URL('..', import.meta.url).pathname;
const harakaDir = join(benchDir, 'node_modules', 'Haraka');

/** `npm ci` in bench/ when Haraka is not there yet (optional plugins left out). */
export async function ensureHarakaInstalled(): Promise<void> {
  if (existsSync(join(harakaDir, 'package.json'))) return;
  console.log('installing Haraka into bench/node_modules (bench/package-lock.json) ...');
  await run('npm', ['ci', '--omit=optional', '--no-audit', '--no-fund'], { cwd: benchDir });
}

export async function startHarakaProcess(): Promise<BenchServer> {
  await ensureHarakaInstalled();
  const dir = await mkdtemp(join(tmpdir(), 'bench-haraka-'));
  await mkdir(join(dir, 'config'));
  await mkdir(join(dir, 'plugins'));
  const port = await freeLoopbackPort();
  const countFile = join(dir, 'accepted');
  await copyFile(
    new URL('haraka/bench_discard.js', import.meta.url),
    join(dir, 'plugins', 'bench_discard.js'),
  );
  // Haraka reads connection.ini whole from the configuration folder: start from its own.
  await copyFile(join(harakaDir, 'config', 'connection.ini'), join(dir, 'config', 'connection.ini'));
  await writeFile(join(dir, 'config', 'plugins'), 'bench_discard\n');
  await writeFile(join(dir, 'config', 'smtp.ini'), `[main]\nlisten=127.0.0.1:${port}\nnodes=0\n`);
  await writeFile(join(dir, 'config', 'log.ini'), '[main]\nlevel=warn\n');
  const log = openSync(join(dir, 'haraka.log'), 'w');
  const child = spawn(process.execPath, [join(harakaDir, 'bin', 'haraka'), '-c', dir], {
    stdio: ['ignore', log, log],
    env: { ...process.env, BENCH_COUNT_FILE: countFile },
  });
  const exited = once(child, 'exit');
  const accepted = async () => Number(await readFile(countFile, 'utf8').catch(() => 'NaN'));
  // Listening once the plugin has written its first count and the port answers.
  for (let waited = 0; !(await answers(port)) || Number.isNaN(await accepted()); waited += 100) {
    if (child.exitCode !== null || waited > 20_000) {
      throw new Error(`Haraka did not start:\n${await readFile(join(dir, 'haraka.log'), 'utf8')}`);
    }
    await sleep(100);
  }
  if (child.pid === undefined) throw new Error('Haraka has no pid');
  return {
    name: 'Haraka, accept + discard',
    port,
    pids: [child.pid],
    async accepted() {
      // The plugin writes its count every 50 ms.
      await sleep(120);
      return accepted();
    },
    async close() {
      child.kill('SIGTERM');
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
