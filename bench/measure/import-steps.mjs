// What the gateway's modules cost in memory: imports them in steps and after each (two full
// GCs later) prints one JSON line with the process's resident set and V8 heap. Each step adds
// what it loads that the steps before did not. Plain JavaScript, so that "node alone" is
// measured before node's type stripper is loaded by the first .ts file.
//
//   node --expose-gc bench/measure/import-steps.mjs
import { memoryUsage } from 'node:process';

const src = new URL('../../src/', import.meta.url);

/** [label, modules]: the modules a step imports. */
const steps = [
  ['node alone', []],
  // The first .ts file loads node's type stripper (amaro: swc built to WebAssembly).
  ['the type stripper (a first .ts file)', [new URL('text-table.ts', import.meta.url).href]],
  ['zod + the configuration schema', [new URL('config/load-config.ts', src).href]],
  ['pino (src/logger.ts)', [new URL('logger.ts', src).href]],
  ['ioredis', ['ioredis']],
  ['bullmq', ['bullmq']],
  ['prom-client (src/metrics.ts)', [new URL('metrics.ts', src).href]],
  ['smtp-server', ['smtp-server']],
  ['mailsplit + the MIME walk (src/mail)', [new URL('mail/walk-message.ts', src).href]],
  ['undici (src/parsing-api)', [new URL('parsing-api/parsing-api-client.ts', src).href]],
  ['the rest of the gateway (src/main.ts)', [new URL('main.ts', src).href]],
  // Not loaded at start: src/sender/load-mailauth.ts imports it for the first message to authenticate.
  [
    'mailauth (the first message authenticated)',
    ['mailauth', 'mailauth/lib/tools.js', 'mailauth/lib/parse-dkim-headers.js'],
  ],
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
