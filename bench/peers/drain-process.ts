import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { BenchServer } from './bench-server.ts';

/** bench/peers/drain-server.ts in a process of its own, answering its count on request. */
export async function startDrainProcess(): Promise<BenchServer> {
  const child: ChildProcess = spawn(
    process.execPath,
    [new URL('drain-server.ts', import.meta.url).pathname],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
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
    name: 'smtp-server draining DATA',
    port,
    pids: [child.pid],
    async accepted() {
      stdin.write('count\n');
      return (await next()).accepted ?? 0;
    },
    async close() {
      stdin.end('close\n');
      await exited;
    },
  };
}
