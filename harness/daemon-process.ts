import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { GatewayConfig } from '../src/config/schema.ts';
import { type TestConfigInput, testConfigFile } from './test-config.ts';

/**
 * The gateway as operators run it: `node src/cli.ts start` in a child process, so tests can
 * send it signals (SIGTERM, SIGKILL) and start it again. Its log lines are kept.
 */
export interface DaemonProcess {
  readonly pid: number;
  readonly smtpPort: number;
  readonly httpUrl: string;
  readonly lines: readonly string[];
  /** Resolves with the first log line, past or future, that the predicate accepts. */
  waitFor(predicate: (line: string) => boolean): Promise<string>;
  /** Resolves with the exit code (null when killed by a signal). */
  readonly exited: Promise<number | null>;
  signal(name: NodeJS.Signals): void;
}

/** Writes the configuration file a daemon reads; returns the configuration it gives. */
export async function writeDaemonConfig(path: string, input: TestConfigInput): Promise<GatewayConfig> {
  const { text, config } = testConfigFile(input);
  await writeFile(path, text);
  return config;
}

/** Starts the daemon and resolves once it says it is ready for mail (or its HTTP API, for a worker). */
export async function startDaemon(
  configPath: string,
  role: 'all' | 'smtp' | 'worker' = 'all',
  logLevel = 'info',
  /** More environment for the process, e.g. NODE_OPTIONS. */
  env: Record<string, string> = {},
  /** The command line's module: the sources, or the built dist/cli.js (the benchmarks). */
  entry = 'src/cli.ts',
): Promise<DaemonProcess> {
  const child: ChildProcess = spawn(
    process.execPath,
    [entry, 'start', '--config', configPath, '--role', role],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, LOG_LEVEL: logLevel, ...env },
    },
  );
  const lines: string[] = [];
  const watchers: Array<{ predicate: (line: string) => boolean; resolve: (line: string) => void }> = [];
  const keep = (line: string) => {
    lines.push(line);
    for (const watcher of [...watchers]) {
      if (!watcher.predicate(line)) continue;
      watchers.splice(watchers.indexOf(watcher), 1);
      watcher.resolve(line);
    }
  };
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  let smtpPort = 0;
  let httpUrl = '';

  const ready = new Promise<void>((resolve, reject) => {
    const onLine = (line: string) => {
      keep(line);
      let entry: { msg?: string; port?: number; url?: string };
      try {
        entry = JSON.parse(line) as typeof entry;
      } catch {
        return;
      }
      if (entry.msg === 'http listening' && entry.url) httpUrl = entry.url;
      if (entry.msg === 'smtp listening' && entry.port) smtpPort = entry.port;
      if (
        entry.msg === 'ready: send a test mail' ||
        (role === 'worker' && entry.msg === 'upload worker running')
      ) {
        resolve();
      }
    };
    const stdout = child.stdout;
    const stderr = child.stderr;
    if (!stdout || !stderr) return reject(new Error('no pipes'));
    createInterface({ input: stdout }).on('line', onLine);
    createInterface({ input: stderr }).on('line', keep);
    void exited.then((code) =>
      reject(new Error(`the daemon exited (${code}) before it was ready:\n${lines.join('\n')}`)),
    );
  });
  await ready;
  return {
    pid: child.pid ?? 0,
    smtpPort,
    httpUrl,
    lines,
    waitFor(predicate) {
      const seen = lines.find(predicate);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve) => watchers.push({ predicate, resolve }));
    },
    exited,
    signal(name) {
      child.kill(name);
    },
  };
}
