import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';

/**
 * The gateway's mock parsing API answering every upload after `latencyMs`, in a process of
 * its own (bench/peers/slow-mock-server.ts), so that the benchmark measures the workers: in
 * the benchmark's process its parsing of every upload shared one event loop with the
 * benchmark's own work and delayed its answers beyond the latency asked for.
 */
export interface SlowMockApi {
  readonly url: string;
  readonly apiKey: string;
  /** Resolves once `count` uploads have arrived in all. */
  waitForUploads(count: number): Promise<void>;
  /** When each upload arrived so far, in ms on the mock's monotonic clock, in order. */
  arrivals(): Promise<number[]>;
  /** How long the mock took to answer an upload, on average: the latency and its own work, ms. */
  meanAnswerMs(): Promise<number>;
  /** An outage begins: every /v3 request is answered 503 until heal(). */
  fail(): Promise<void>;
  /** The outage ends; resolves with when, on the clock of arrivals(). */
  heal(): Promise<number>;
  close(): Promise<void>;
}

const apiKey = 'bench-upload-key';

export async function startSlowMockApi(latencyMs: number): Promise<SlowMockApi> {
  const child: ChildProcess = spawn(
    process.execPath,
    [new URL('slow-mock-server.ts', import.meta.url).pathname, String(latencyMs), apiKey],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const { stdin, stdout } = child;
  if (!stdin || !stdout) throw new Error('slow mock API: no pipes');
  const exited = once(child, 'exit');
  const lines = createInterface({ input: stdout })[Symbol.asyncIterator]();
  // One request at a time, each answered by the next line.
  const ask = async (request: string | null): Promise<Record<string, unknown>> => {
    if (request !== null) stdin.write(`${request}\n`);
    const line = await lines.next();
    if (line.done) throw new Error('the slow mock API exited');
    return JSON.parse(line.value) as Record<string, unknown>;
  };
  const { url } = await ask(null);
  if (typeof url !== 'string') throw new Error('the slow mock API did not say its URL');
  return {
    url,
    apiKey,
    async waitForUploads(count) {
      await ask(`wait ${count}`);
    },
    async arrivals() {
      const { arrivals } = await ask('arrivals');
      return Array.isArray(arrivals) ? arrivals.map(Number) : [];
    },
    async meanAnswerMs() {
      return Number((await ask('answers')).meanMs);
    },
    async fail() {
      await ask('fail');
    },
    async heal() {
      return Number((await ask('heal')).healedAt);
    },
    async close() {
      if (child.exitCode === null) stdin.end('close\n');
      await exited;
    },
  };
}

/**
 * Documents per second between the `from`th arrival (0-based) and the last: the first few
 * are left out, as the workers' start (connections, BullMQ's first fetch) is not their rate.
 */
export function uploadRate(arrivals: readonly number[], from: number): number {
  const first = arrivals[from];
  const last = arrivals.at(-1);
  if (first === undefined || last === undefined || last <= first) return Number.NaN;
  return ((arrivals.length - 1 - from) * 1000) / (last - first);
}
