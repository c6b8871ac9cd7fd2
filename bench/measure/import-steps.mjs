// What the gateway's modules cost in memory: imports them in steps and after each (two full
// GCs later) prints one JSON line with the process's resident set and V8 heap. Each step adds
// what it loads that the steps before did not. The modules are bundled as the image and the
// benchmarks' daemon run them (scripts/build.ts), with each step's module as an entry point
// of its own: the bundle's folder is the first argument (bench/footprint.ts builds it). The
// last step is what running the sources instead would add (node's type stripper). Plain
// JavaScript.
//
//   node --expose-gc bench/measure/import-steps.mjs DIR
import { memoryUsage } from 'node:process';
import { pathToFileURL } from 'node:url';

const bundle = pathToFileURL(`${process.argv[2]}/`);
/** A step's entry point in the bundle: STEP_SOURCES in bench/footprint.ts names its source. */
const entry = (name) => new URL(`${name}.js`, bundle).href;

/** [label, modules]: the modules a step imports. */
const steps = [
  ['node alone', []],
  ['zod + the configuration schema', [entry('config/load-config')]],
  ['pino (logger)', [entry('logger')]],
  ['ioredis (redis/connections)', [entry('redis/connections')]],
  ["BullMQ's Queue (queue/upload-queue)", [entry('queue/upload-queue')]],
  ['prom-client (metrics)', [entry('metrics')]],
  ['the daemon and its HTTP API (main)', [entry('main')]],
  ['smtp-server (smtp/create-smtp-server)', [entry('smtp/create-smtp-server')]],
  ['mailsplit + the MIME walk (mail/walk-message)', [entry('mail/walk-message')]],
  ['the rest of the SMTP role (roles/intake-role)', [entry('roles/intake-role')]],
  // Not loaded by an idle --role smtp daemon: the rows above are what it loads.
  ['the upload role, worker only (undici, uploader/)', [entry('roles/upload-role')]],
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
