/**
 * Upload-rate benchmark: how close the workers come to the rate the parsing API allows. A
 * `--role smtp` gateway fills the queue, then one `--role worker` process uploads to the mock
 * API (in a process of its own) answering each upload after 50 ms; documents/s against
 * `upload.concurrency / latency` (the target: at least 90% of it), and against the mock's
 * measured answer time.
 *
 *   npm run bench -- upload
 *   BENCH_UPLOADS=800 npm run bench -- upload
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeMessageFile } from './load/pdf-message.ts';
import { runLoad } from './load/smtp-load.ts';
import { loadAverage } from './measure/process-stats.ts';
import { startBenchRedis, startGatewayProcess } from './peers/gateway-process.ts';
import { startSlowMockApi, uploadRate } from './peers/slow-mock-api.ts';

const KB = 1024;
export const API_LATENCY_MS = 50;
/** upload.concurrency: the gateway's default. */
export const CONCURRENCY = 8;

export async function uploadRateBenchmark(env: NodeJS.ProcessEnv): Promise<void> {
  const documents = Number(env.BENCH_UPLOADS ?? 480);
  const dir = await mkdtemp(join(tmpdir(), 'bench-upload-'));
  const redis = await startBenchRedis();
  const mock = await startSlowMockApi(API_LATENCY_MS);
  const common = {
    redisUrl: redis.url,
    recipients: documents,
    api: { baseUrl: mock.url, apiKey: mock.apiKey },
    upload: { concurrency: CONCURRENCY },
  };
  try {
    const smtp = await startGatewayProcess({ ...common, role: 'smtp' });
    try {
      const file = await writeMessageFile(dir, 100 * KB, 'upload');
      await runLoad({ port: smtp.port, file: file.path, messages: documents, sessions: 20, reuse: true });
    } finally {
      await smtp.close();
    }
    const worker = await startGatewayProcess({ ...common, role: 'worker' });
    try {
      await mock.waitForUploads(documents);
    } finally {
      await worker.close();
    }
    const rate = uploadRate(await mock.arrivals(), Math.floor(documents / 10));
    const allowed = CONCURRENCY / (API_LATENCY_MS / 1000);
    const answerMs = await mock.meanAnswerMs();
    console.log(
      `one worker process, upload.concurrency ${CONCURRENCY}, API latency ${API_LATENCY_MS} ms: ` +
        `${rate.toFixed(1)} documents/s of ${allowed.toFixed(0)} allowed = ${((100 * rate) / allowed).toFixed(0)}% ` +
        `(target: at least 90%); ${documents} documents of 100 KB; load average ${loadAverage().toFixed(2)}`,
    );
    // The mock's own reading of each form comes on top of the latency: the gateway's share is
    // the rate against what the mock's answers allowed.
    console.log(
      `the mock answered in ${answerMs.toFixed(1)} ms on average: ` +
        `${((100 * rate * answerMs) / (CONCURRENCY * 1000)).toFixed(0)}% of upload.concurrency / that`,
    );
  } finally {
    await mock.close();
    await redis.close();
    await rm(dir, { recursive: true, force: true });
  }
}
