/**
 * What holds the gateway's memory: its modules as bundled for dist/, imported in steps in a fresh
 * process (bench/measure/import-steps.mjs: resident set and V8 heap after each), then the idle
 * `--role smtp` daemon (no mock API) as its own metrics describe it: resident set, V8 heap
 * used and reserved, memory outside the heap.
 *
 *   npm run bench -- footprint
 */
import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { buildGateway as bundle } from '../scripts/build.ts';
import { loadAverage, memoryMiB } from './measure/process-stats.ts';
import { textTable } from './measure/text-table.ts';
import { buildGateway, startGatewayProcess } from './peers/gateway-process.ts';

const run = promisify(execFile);

/**
 * The sources (under src/, without .ts) whose modules import-steps.mjs imports step by step:
 * each an entry point of the steps' bundle, which is built as dist/ is, in a folder of its own.
 */
export const STEP_SOURCES = [
  'config/load-config',
  'logger',
  'redis/connections',
  'queue/upload-queue',
  'metrics',
  'main',
  'smtp/create-smtp-server',
  'roles/intake-role',
  'mail/walk-message',
  'roles/upload-role',
];

export async function footprintBenchmark(): Promise<void> {
  await buildGateway();
  const stepsDir = fileURLToPath(new URL('../dist/footprint-steps', import.meta.url));
  await bundle({
    outdir: stepsDir,
    entryPoints: Object.fromEntries(STEP_SOURCES.map((source) => [source, `src/${source}.ts`])),
  });
  const { stdout } = await run(process.execPath, [
    '--expose-gc',
    new URL('measure/import-steps.mjs', import.meta.url).pathname,
    stepsDir,
  ]);
  const steps = stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { label: string; rss: number; heapUsed: number; external: number });
  const rows = [['modules imported, in this order', 'RSS MiB', '+ RSS', 'V8 heap used MiB', '+ heap']];
  let previous = { rss: 0, heapUsed: 0 };
  for (const step of steps) {
    rows.push([
      step.label,
      step.rss.toFixed(1),
      `+${(step.rss - previous.rss).toFixed(1)}`,
      step.heapUsed.toFixed(1),
      `+${(step.heapUsed - previous.heapUsed).toFixed(1)}`,
    ]);
    previous = step;
  }
  console.log(textTable(rows));

  const gateway = await startGatewayProcess({ recipients: 1 });
  try {
    await sleep(2000);
    const [pid] = gateway.pids;
    const rss = pid === undefined ? Number.NaN : (await memoryMiB(pid)).rss;
    const metrics = await (await fetch(new URL('/metrics', gateway.httpUrl))).text();
    const gauge = (name: string, label = '') => {
      const line = metrics.split('\n').find((text) => text.startsWith(`${name}${label} `));
      return Number(line?.split(' ')[1] ?? Number.NaN) / 1024 / 1024;
    };
    const space = (name: string) =>
      gauge('ingest_gateway_nodejs_heap_space_size_used_bytes', `{space="${name}"}`);
    console.log(
      `idle ingest-gateway --role smtp (no mock API, one workspace): RSS ${rss.toFixed(0)} MiB; V8 heap ` +
        `${gauge('ingest_gateway_nodejs_heap_size_used_bytes').toFixed(1)} MiB used of ` +
        `${gauge('ingest_gateway_nodejs_heap_size_total_bytes').toFixed(1)} MiB reserved (old space ` +
        `${space('old').toFixed(1)}, code ${space('code').toFixed(1)}); outside the heap ` +
        `${gauge('ingest_gateway_nodejs_external_memory_bytes').toFixed(1)} MiB; load average ${loadAverage().toFixed(2)}`,
    );
  } finally {
    await gateway.close();
  }
}
