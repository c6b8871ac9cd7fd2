import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeLoopbackPort } from '../src/redis/local-redis-server.ts';

/**
 * A private haproxy in TCP mode in front of the gateway, as a load balancer is: clients connect
 * to `port`, and haproxy opens a connection to the gateway for each, starting it with a PROXY
 * protocol v2 header (`send-proxy-v2`). With `healthChecks`, it also checks the gateway as a
 * balancer does, each check a connection of its own that starts with a v2 LOCAL header
 * (`check-send-proxy`) and then speaks SMTP (`option smtpchk`: greeting, HELO, QUIT).
 * Needs Debian's `haproxy` package, which it installs when missing; runs in the foreground
 * beside any system haproxy without touching it.
 */
export interface TestHaproxy {
  /** Where clients connect. */
  port: number;
  /**
   * haproxy's view of the gateway, from its statistics: `status` (`UP`, `DOWN`, `no check`, …)
   * and the last health check's `check_status` (`L7OK` once the gateway answered it in SMTP).
   */
  server(): Promise<{ status: string; check_status: string }>;
  /** What haproxy wrote to stderr (its alerts and warnings). */
  stderr(): string;
  stop(): Promise<void>;
}

export interface HaproxyOptions {
  /** The gateway's SMTP port on 127.0.0.1. */
  backendPort: number;
  /** Check the gateway every `healthChecks` ms; absent: no checks. */
  healthChecks?: number;
}

export async function startHaproxy(options: HaproxyOptions): Promise<TestHaproxy> {
  ensureHaproxyInstalled();
  const dir = await mkdtemp(join(tmpdir(), 'gateway-haproxy-'));
  const port = await freeLoopbackPort();
  const statsPort = await freeLoopbackPort();
  const checks = options.healthChecks
    ? ` check check-send-proxy inter ${options.healthChecks}ms rise 1 fall 3\n  option smtpchk HELO haproxy.test\n  timeout check 5s`
    : '';
  const config = [
    'global',
    '  maxconn 100',
    'defaults',
    '  mode tcp',
    '  timeout connect 5s',
    '  timeout client 30s',
    '  timeout server 30s',
    'frontend smtp',
    `  bind 127.0.0.1:${port}`,
    '  default_backend gateway',
    'backend gateway',
    `  server gateway 127.0.0.1:${options.backendPort} send-proxy-v2${checks}`,
    'frontend stats',
    '  mode http',
    `  bind 127.0.0.1:${statsPort}`,
    '  stats enable',
    '  stats uri /stats',
    '',
  ].join('\n');
  const file = join(dir, 'haproxy.cfg');
  await writeFile(file, config);

  let stderr = '';
  const child: ChildProcess = spawn('/usr/sbin/haproxy', ['-db', '-f', file], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const server = async () => {
    const response = await fetch(`http://127.0.0.1:${statsPort}/stats;csv`);
    const csv = await response.text();
    const [header = '', ...rows] = csv.replace(/^# /, '').trim().split('\n');
    const columns = header.split(',');
    const row = rows
      .map((line) => line.split(','))
      .find((cells) => cells[0] === 'gateway' && cells[1] === 'gateway');
    const cell = (name: string) => row?.[columns.indexOf(name)] ?? '';
    return { status: cell('status'), check_status: cell('check_status') };
  };

  const haproxy: TestHaproxy = {
    port,
    server,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
  // Listening once its statistics answer: haproxy binds every listener before it serves any.
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`haproxy exited: ${stderr}`);
    try {
      await server();
      return haproxy;
    } catch {
      if (Date.now() > deadline) {
        await haproxy.stop();
        throw new Error(`haproxy did not start: ${stderr}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

function ensureHaproxyInstalled(): void {
  if (existsSync('/usr/sbin/haproxy')) return;
  // Like Postfix for its suites: a fresh machine gets Debian's package.
  execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'haproxy'], {
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    stdio: 'ignore',
  });
}
