import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { promisify } from 'node:util';
import { type ProcessCounters, parseProcStat } from '../../harness/proc-stat.ts';

const run = promisify(execFile);

/**
 * What the benchmark reads about a server process from Linux's /proc: CPU time used, resident
 * memory now and at its peak, and the core it is pinned to. Every figure covers all threads
 * of the process (libuv's pool, V8's GC helpers), as the kernel accounts them.
 */

export type { ProcessCounters };

/** CPU time (user and kernel) and minor page faults of the process so far. */
export async function processCounters(pid: number): Promise<ProcessCounters> {
  return parseProcStat(await readFile(`/proc/${pid}/stat`, 'utf8'));
}

export interface Memory {
  /** Resident set now, MiB. */
  rss: number;
  /** Highest resident set since start or the last resetPeak, MiB. */
  peak: number;
}

export async function memoryMiB(pid: number): Promise<Memory> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rss: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024 };
}

/** Starts a new peak: VmHWM becomes the current RSS (clear_refs 5, Linux 4.0). */
export async function resetPeak(pid: number): Promise<void> {
  await writeFile(`/proc/${pid}/clear_refs`, '5');
}

/**
 * True when the machine has a core for the servers and another for the load. The machine's
 * cores, not this process's: once the benchmark has pinned itself it may use only one.
 */
export function canPin(): boolean {
  return cpus().length > 1;
}

/** Pins every thread of `pid` (and the threads it starts later) to `core`. */
export async function pin(pid: number, core: number): Promise<void> {
  if (!canPin()) return;
  // A thread that ends while taskset walks the list fails the call: walk it again.
  for (let attempt = 1; ; attempt++) {
    try {
      await run('taskset', ['--all-tasks', '--cpu-list', '--pid', String(core), String(pid)]);
      return;
    } catch (err) {
      if (attempt >= 5) throw err;
    }
  }
}

/** The 1-minute load average, for the record beside each figure. */
export function loadAverage(): number {
  return loadavg()[0] ?? 0;
}

/** Medians of 3 or more runs are what the tables print. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? Number.NaN)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}
