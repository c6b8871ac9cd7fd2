/**
 * Memory and event-loop benchmark: each server started fresh, its resident memory idle, then
 * twenty 10 MB PDF attachments arriving at once (twenty connections, one message each): the
 * peak resident memory, and the worst event-loop delay as a second connection sees it (the
 * slowest NOOP round trip, harness/stall-probe.ts). Three deliveries of the twenty per
 * server; the first peak, the medians and the worst are printed.
 *
 *   npm run bench -- memory
 *
 * The targets (docs/architecture.md, "Performance targets"): under 90 MiB idle (`--role smtp`, no mock API), under
 * 150 MiB while the twenty arrive, and no stall over 50 ms.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startStallProbe } from '../harness/stall-probe.ts';
import { writeMessageFile } from './load/pdf-message.ts';
import { LOAD_CORE, runLoad, SERVER_CORE } from './load/smtp-load.ts';
import { loadAverage, median, memoryMiB, pin, resetPeak } from './measure/process-stats.ts';
import { textTable } from './measure/text-table.ts';
import type { BenchServer } from './peers/bench-server.ts';
import { startDrainProcess } from './peers/drain-process.ts';
import { startGatewayProcess } from './peers/gateway-process.ts';
import { startHarakaProcess } from './peers/haraka-process.ts';

const MB = 1024 * 1024;
const AT_ONCE = 20;
/** Time a freshly started server is given to finish starting before its idle memory is read, ms. */
const SETTLE_MS = 2000;

export async function memoryBenchmark(env: NodeJS.ProcessEnv): Promise<void> {
  const rounds = Number(env.BENCH_MEMORY_ROUNDS ?? 3);
  const dir = await mkdtemp(join(tmpdir(), 'bench-memory-'));
  await pin(process.pid, LOAD_CORE);
  const starters: Array<() => Promise<BenchServer>> = [
    startDrainProcess,
    startHarakaProcess,
    () => startGatewayProcess({ recipients: AT_ONCE, name: 'ingest-gateway --role smtp' }),
  ];
  const rows = [['', 'idle RSS MiB', 'peak RSS MiB (first / median)', 'worst NOOP ms (median / max)']];
  const loads: number[] = [loadAverage()];
  try {
    for (const start of starters) {
      const server = await start();
      try {
        for (const pid of server.pids) await pin(pid, SERVER_CORE);
        await sleep(SETTLE_MS);
        const [main] = server.pids;
        if (main === undefined) throw new Error(`${server.name}: no process`);
        const idle = (await memoryMiB(main)).rss;
        const peaks: number[] = [];
        const stalls: number[] = [];
        for (let round = 1; round <= rounds; round++) {
          const file = await writeMessageFile(dir, 10 * MB, `memory-${round}-${main}`);
          await resetPeak(main);
          const probe = await startStallProbe(server.port);
          await runLoad({
            port: server.port,
            file: file.path,
            messages: AT_ONCE,
            sessions: AT_ONCE,
            reuse: false,
          });
          stalls.push(await probe.stop());
          peaks.push((await memoryMiB(main)).peak);
          loads.push(loadAverage());
        }
        rows.push([
          server.name,
          idle.toFixed(0),
          `${(peaks[0] ?? 0).toFixed(0)} / ${median(peaks).toFixed(0)}`,
          `${median(stalls).toFixed(0)} / ${Math.max(...stalls).toFixed(0)}`,
        ]);
      } finally {
        await server.close();
      }
    }
    console.log(
      `twenty 10 MB PDF attachments at once, ${rounds} times per server (each server started fresh)`,
    );
    console.log(textTable(rows));
    console.log('targets for the gateway: idle < 90 MiB, peak < 150 MiB, stall < 50 ms');
    console.log(`load average: ${Math.min(...loads).toFixed(2)}-${Math.max(...loads).toFixed(2)}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
