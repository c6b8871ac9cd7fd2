import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

/** How long a scanner may take to load before the test gives up: rspamd compiles its rules, clamd its database. */
const START_DEADLINE_MS = 120_000;

export interface ScannerProcess {
  child: ChildProcess;
  /** SIGTERM, so it takes its workers and sockets with it; resolves once it has exited. */
  stop(): Promise<void>;
  /** SIGSTOP to it and its workers: connections stay open and nothing is read or answered. */
  freeze(): void;
  thaw(): void;
  /** SIGKILL to it and its workers, as a crash; resolves once it has exited. */
  kill(): Promise<void>;
}

/**
 * A scanner daemon (clamd, rspamd) run in the foreground by a test, in a process group of its
 * own (rspamd's workers are its children), its output kept for the failure message.
 * `answers` says when it serves.
 */
export async function spawnScanner(
  command: string,
  args: readonly string[],
  answers: () => Promise<boolean>,
): Promise<ScannerProcess> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const group = (signal: NodeJS.Signals) => {
    if (child.pid !== undefined) process.kill(-child.pid, signal);
  };
  let output = '';
  const keep = (data: Buffer) => {
    output = (output + data.toString('utf8')).slice(-8000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = once(child, 'exit');
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${command} exited while starting:\n${output}`);
    }
    if (await answers()) break;
    if (Date.now() - started > START_DEADLINE_MS) {
      child.kill('SIGKILL');
      throw new Error(`${command} did not answer within ${START_DEADLINE_MS} ms:\n${output}`);
    }
    await sleep(100);
  }
  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    child,
    async stop() {
      if (!running()) return;
      group('SIGCONT');
      child.kill('SIGTERM');
      await exited;
    },
    freeze: () => group('SIGSTOP'),
    thaw: () => group('SIGCONT'),
    async kill() {
      if (!running()) return;
      group('SIGKILL');
      await exited;
    },
  };
}

/** A scanner a test stops, freezes, kills and starts again; closing it also removes `dir`. */
export interface RestartableScanner {
  start(): Promise<void>;
  /** Stops the scanner (its socket goes with it): a scanner that does not answer. */
  stop(): Promise<void>;
  /** SIGSTOP: connections stay open, nothing is read (a hung scanner) until `thaw()`. */
  freeze(): void;
  thaw(): void;
  /** SIGKILL, as a crash; `start()` brings it back. */
  kill(): Promise<void>;
  close(): Promise<void>;
}

/** Starts the scanner of `spawnScanner`'s arguments, and keeps it restartable until closed. */
export async function startRestartableScanner(
  command: string,
  args: readonly string[],
  answers: () => Promise<boolean>,
  dir: string,
): Promise<RestartableScanner> {
  let running: ScannerProcess | undefined;
  const start = async () => {
    running ??= await spawnScanner(command, args, answers);
  };
  const end = async (how: 'stop' | 'kill') => {
    const was = running;
    running = undefined;
    await was?.[how]();
  };
  await start();
  return {
    start,
    stop: () => end('stop'),
    freeze: () => running?.freeze(),
    thaw: () => running?.thaw(),
    kill: () => end('kill'),
    async close() {
      await end('stop');
      await rm(dir, { recursive: true, force: true });
    },
  };
}
