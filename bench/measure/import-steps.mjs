// What the gateway's modules cost in memory: imports them in steps and after each (two full
// GCs later) prints one JSON line with the process's resident set and V8 heap. Each step adds
// what it loads that the steps before did not. The modules are those of dist/, built from
// src/ (npm run build), as the image and the benchmarks' daemon run them; the last step is
// what running the sources instead would add (node's type stripper). Plain JavaScript.
//
//   node --expose-gc bench/measure/import-steps.mjs
import { memoryUsage } from 'node:process';

const src = new URL('../../dist/', import.meta.url);

/** [label, modules]: the modules a step imports. */
const steps = [
  ['node alone', []],
  ['zod + the configuration schema', [new URL('config/load-config.js', src).href]],
  ['pino (logger.js)', [new URL('logger.js', src).href]],
  ['ioredis', ['ioredis']],
  ['bullmq', ['bullmq']],
  ['prom-client (metrics.js)', [new URL('metrics.js', src).href]],
  ['the daemon and its HTTP API (main.js)', [new URL('main.js', src).href]],
  ['smtp-server', ['smtp-server']],
  ['mailsplit + the MIME walk (mail/)', [new URL('mail/walk-message.js', src).href]],
  ['the rest of the SMTP role (roles/intake-role.js)', [new URL('roles/intake-role.js', src).href]],
  // Not loaded by an idle --role smtp daemon: the rows above are what it loads.
  ['the upload role, worker only (undici, uploader/)', [new URL('roles/upload-role.js', src).href]],
  // src/http/queue-board.ts imports it on the first request to /admin/queues.
  [
    'Bull Board (first request to it)',
    ['@bull-board/api', '@bull-board/api/bullMQAdapter', '@bull-board/hono', 'hono'],
  ],
  // src/sender/load-mailauth.ts imports it for the first message to authenticate.
  [
    'mailauth (the first message authenticated)',
    ['mailauth', 'mailauth/lib/tools.js', 'mailauth/lib/parse-dkim-headers.js'],
  ],
  // Running src/*.ts instead of dist/: the first .ts file loads node's type stripper (amaro:
  // swc built to WebAssembly), which then strips each source file as it loads.
  ['the type stripper, running the sources', [new URL('../../src/main.ts', import.meta.url).href]],
];

const mib = (bytes) => Math.round((bytes / 1024 / 1024) * 10) / 10;
for (const [label, modules] of steps) {
  for (const module of modules) await import(module);
  globalThis.gc?.();
  globalThis.gc?.();
  const usage = memoryUsage();
  process.stdout.write(
    `${JSON.stringify({ label, rss: mib(usage.rss), heapUsed: mib(usage.heapUsed), external: mib(usage.external) })}\n`,
  );
}
