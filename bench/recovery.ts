/**
 * Recovery benchmark: how long after an outage of the parsing API the documents accepted
 * during it reach the service. The mock API (its own process) answers every /v3 request 503
 * while messages arrive and for BENCH_OUTAGE_S seconds in all (default 40); the uploads back
 * off, doubling with full jitter. Then the mock answers again, and the figure is the seconds
 * from that moment to the last document uploaded, once with `upload.promoteAfterRecovery`
 * (the default) and once without, each on a fresh gateway and Redis.
 *
 *   npm run bench -- recovery
 *   BENCH_RECOVERY_DOCS=100 BENCH_OUTAGE_S=60 npm run bench -- recovery
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { writeMessageFile } from './load/pdf-message.ts';
import { runLoad } from './load/smtp-load.ts';
import { loadAverage } from './measure/process-stats.ts';
import { textTable } from './measure/text-table.ts';
import { startGatewayProcess } from './peers/gateway-process.ts';
import { startSlowMockApi } from './peers/slow-mock-api.ts';

const KB = 1024;
/** The mock's answer time once healed, ms. */
const API_LATENCY_MS = 20;

export async function recoveryBenchmark(env: NodeJS.ProcessEnv): Promise<void> {
  const documents = Number(env.BENCH_RECOVERY_DOCS ?? 60);
  const outageMs = Number(env.BENCH_OUTAGE_S ?? 40) * 1000;
  const rows: string[][] = [];
  for (const promote of [true, false]) {
    const figure = await recoveryRun(documents, outageMs, promote);
    rows.push([
      promote ? 'on (default)' : 'off',
      figure.lastSeconds.toFixed(1),
      figure.medianSeconds.toFixed(1),
      String(documents),
    ]);
  }
  console.log(
    `uploads after a ${(outageMs / 1000).toFixed(0)} s outage of the parsing API (503 to every request), ` +
      `${documents} documents of 100 KB accepted during it; load average ${loadAverage().toFixed(2)}`,
  );
  console.log(
    textTable([
      ['upload.promoteAfterRecovery', 's from recovery to the last upload', 'median s', 'documents'],
      ...rows,
    ]),
  );
}

async function recoveryRun(
  documents: number,
  outageMs: number,
  promote: boolean,
): Promise<{ lastSeconds: number; medianSeconds: number }> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-recovery-'));
  const mock = await startSlowMockApi(API_LATENCY_MS);
  try {
    await mock.fail();
    const outageStarted = performance.now();
    const gateway = await startGatewayProcess({
      role: 'all',
      recipients: documents,
      api: { baseUrl: mock.url, apiKey: mock.apiKey },
      upload: { concurrency: 8, promoteAfterRecovery: promote },
    });
    try {
      const file = await writeMessageFile(dir, 100 * KB, 'recovery');
      await runLoad({ port: gateway.port, file: file.path, messages: documents, sessions: 10, reuse: true });
      await sleep(Math.max(0, outageMs - (performance.now() - outageStarted)));
      const healedAt = await mock.heal();
      await mock.waitForUploads(documents);
      const after = (await mock.arrivals()).map((at) => (at - healedAt) / 1000).sort((a, b) => a - b);
      return {
        lastSeconds: after.at(-1) ?? Number.NaN,
        medianSeconds: after[Math.floor(after.length / 2)] ?? Number.NaN,
      };
    } finally {
      await gateway.close();
    }
  } finally {
    await mock.close();
    await rm(dir, { recursive: true, force: true });
  }
}
