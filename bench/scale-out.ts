/**
 * Scale-out benchmark: on one Redis, 1 and 2 processes of `--role smtp` (two
 * ports, the load split between them) and then 1 and 2 of `--role worker` against the mock
 * API answering each upload after 50 ms. Prints messages/s accepted per shape, documents/s
 * uploaded per shape, and the upload rate as a fraction of `workers × concurrency / latency`.
 *
 *   npm run bench -- scaleout
 *   BENCH_SCALEOUT_MESSAGES=1200 npm run bench -- scaleout
 *
 * Nothing is pinned: two processes of a role are meant to use both cores. The load runs on
 * the same two cores, so the intake figures say how the shapes compare, not what a bigger
 * machine would take.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeMessageFile } from './load/pdf-message.ts';
import { runLoad } from './load/smtp-load.ts';
import { loadAverage } from './measure/process-stats.ts';
import { textTable } from './measure/text-table.ts';
import { type GatewayUnderBench, startBenchRedis, startGatewayProcess } from './peers/gateway-process.ts';
import { startSlowMockApi, uploadRate } from './peers/slow-mock-api.ts';
import { API_LATENCY_MS, CONCURRENCY } from './upload-rate.ts';

const KB = 1024;
const SESSIONS = 20;

export async function scaleOutBenchmark(env: NodeJS.ProcessEnv): Promise<void> {
  const messages = Number(env.BENCH_SCALEOUT_MESSAGES ?? 600);
  const dir = await mkdtemp(join(tmpdir(), 'bench-scaleout-'));
  const redis = await startBenchRedis();
  const mock = await startSlowMockApi(API_LATENCY_MS);
  const common = {
    redisUrl: redis.url,
    recipients: messages,
    api: { baseUrl: mock.url, apiKey: mock.apiKey },
    upload: { concurrency: CONCURRENCY },
  };
  const rows = [
    ['shape', 'messages/s accepted', 'documents/s uploaded', 'of workers x concurrency / latency'],
  ];
  const loads = [loadAverage()];
  try {
    let queued = 0;
    for (const processes of [1, 2]) {
      const gateways: GatewayUnderBench[] = [];
      try {
        for (let i = 0; i < processes; i++)
          gateways.push(await startGatewayProcess({ ...common, role: 'smtp' }));
        // Each process gets its share of the sessions and messages, and a file of its own.
        const files = await Promise.all(
          gateways.map((_, i) => writeMessageFile(dir, 100 * KB, `scaleout-${processes}-${i}`)),
        );
        const started = performance.now();
        await Promise.all(
          gateways.map((gateway, i) =>
            runLoad({
              port: gateway.port,
              file: files[i]?.path ?? '',
              messages: messages / processes,
              sessions: SESSIONS / processes,
              reuse: true,
            }),
          ),
        );
        const seconds = (performance.now() - started) / 1000;
        queued += messages;
        rows.push([`${processes} x --role smtp`, (messages / seconds).toFixed(0), '', '']);
        loads.push(loadAverage());
      } finally {
        await Promise.allSettled(gateways.map((gateway) => gateway.close()));
      }
    }
    // The queue now holds `queued` documents: one worker uploads a third, two workers the rest.
    let uploaded = 0;
    for (const processes of [1, 2]) {
      const share = processes === 1 ? Math.floor(queued / 3) : queued - uploaded;
      const from = (await mock.arrivals()).length;
      const workers: GatewayUnderBench[] = [];
      try {
        for (let i = 0; i < processes; i++)
          workers.push(await startGatewayProcess({ ...common, role: 'worker' }));
        await mock.waitForUploads(uploaded + share);
      } finally {
        await Promise.allSettled(workers.map((worker) => worker.close()));
      }
      // Uploads finished while the workers closed belong to this shape too; the first tenth is start-up.
      const all = await mock.arrivals();
      const arrivals = all.slice(from, uploaded + share);
      uploaded = all.length;
      const rate = uploadRate(arrivals, Math.floor(arrivals.length / 10));
      const allowed = (processes * CONCURRENCY * 1000) / API_LATENCY_MS;
      rows.push([
        `${processes} x --role worker`,
        '',
        rate.toFixed(1),
        `${((100 * rate) / allowed).toFixed(0)}% of ${allowed.toFixed(0)}`,
      ]);
      loads.push(loadAverage());
    }
    console.log(
      `one Redis; ${messages} x 100 KB PDF per smtp shape (${SESSIONS} sessions split over the processes); ` +
        `workers: upload.concurrency ${CONCURRENCY}, API latency ${API_LATENCY_MS} ms`,
    );
    console.log(textTable(rows));
    console.log(`load average: ${Math.min(...loads).toFixed(2)}-${Math.max(...loads).toFixed(2)}`);
  } finally {
    await mock.close();
    await redis.close();
    await rm(dir, { recursive: true, force: true });
  }
}
