/**
 * What the gateway's own steps on one message cost when nothing else runs: the steps the
 * intake takes beyond storing the message (the store-once floor), each timed alone in this
 * process on the benchmark's messages, with no SMTP, no Redis and no profiler. Put beside the
 * allowance the intake goals leave the gateway over the floor (`intake`: the floor's CPU per
 * message / 0.85, minus the floor's), it says which steps alone already exceed it.
 *
 *   npm run bench -- budget
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createMemoryStore } from '../harness/mail-memory-store.ts';
import { createBareLineEndingScanner } from '../src/intake/bare-line-ending.ts';
import { Base64Decoder } from '../src/mail/decoders/base64-decoder.ts';
import { MAX_HEADER_BYTES } from '../src/mail/walk-limits.ts';
import { walkMessage } from '../src/mail/walk-message.ts';
import { pdfMessage } from './load/pdf-message.ts';
import { loadAverage } from './measure/process-stats.ts';
import { textTable } from './measure/text-table.ts';

const KB = 1024;
const MB = 1024 * 1024;
/** The size of the chunks DATA arrives in at the gateway (smtp-server's stream, 64 KiB reads). */
const CHUNK = 64 * KB;

interface Sample {
  label: string;
  /** The message as the gateway stores it: CRLF line endings. */
  chunks: Buffer[];
  /** The attachment's base64 body, CRLF lines, in chunks. */
  base64: Buffer[];
  /** The attachment's decoded bytes. */
  document: Buffer;
}

interface Step {
  name: string;
  run(sample: Sample): Promise<void> | void;
}

const steps: Step[] = [
  {
    name: 'SHA-256 of the raw message (the delivery identity)',
    run: (sample) => {
      const hash = createHash('sha256');
      for (const chunk of sample.chunks) hash.update(chunk);
      hash.digest('hex');
    },
  },
  {
    name: 'bare CR / LF scan (SMTP smuggling)',
    run: (sample) => {
      const scanner = createBareLineEndingScanner();
      for (const chunk of sample.chunks) scanner.push(chunk);
      scanner.end();
    },
  },
  {
    name: 'base64 decoding of the attachment',
    run: async (sample) => {
      await pipeline(Readable.from(sample.base64), new Base64Decoder(), async (decoded) => {
        for await (const _ of decoded);
      });
    },
  },
  {
    name: 'SHA-256 of the decoded attachment',
    run: (sample) => {
      createHash('sha256').update(sample.document).digest('hex');
    },
  },
  {
    name: 'the MIME walk: split, decode, hash, type (all of the above but the first two)',
    run: async (sample) => {
      await walkMessage(
        Readable.from(sample.chunks),
        createMemoryStore({ keepBytes: false }),
        { maxDepth: 3, maxParts: 100, maxHeaderBytes: MAX_HEADER_BYTES, maxPartSize: 64 * MB },
        { spansOfRaw: true },
      );
    },
  },
];

export async function budgetBenchmark(env: NodeJS.ProcessEnv): Promise<void> {
  const loads = [
    { label: '100 KB', size: 100 * KB, runs: Number(env.BENCH_SMALL ?? 600) },
    { label: '5 MB', size: 5 * MB, runs: Number(env.BENCH_LARGE ?? 40) },
  ];
  const samples = loads.map((load) => ({ ...load, sample: sampleOf(load.size, load.label) }));
  const rows: string[][] = [];
  for (const step of steps) {
    const row = [step.name];
    for (const { sample, runs } of samples) {
      // One unmeasured pass of as many runs first: V8 has compiled the step when it is timed.
      for (let i = 0; i < runs; i += 1) await step.run(sample);
      const before = process.cpuUsage();
      for (let i = 0; i < runs; i += 1) await step.run(sample);
      const used = process.cpuUsage(before);
      row.push(((used.user + used.system) / runs).toFixed(0));
    }
    rows.push(row);
  }
  console.log(
    `\nThe gateway's own steps on one message, alone in one process (CPU µs per message, ` +
      `mean of ${samples.map((entry) => `${entry.runs} x ${entry.label}`).join(' and ')}); ` +
      `load average ${loadAverage().toFixed(2)}`,
  );
  console.log(textTable([['step', ...samples.map((entry) => `${entry.label} µs`)], ...rows]));
}

/** A benchmark message as the gateway stores it, cut into DATA's chunks, and its attachment. */
function sampleOf(size: number, label: string): Sample {
  const wire = Buffer.from(pdfMessage(size, label).file.toString('latin1').replace(/\n/g, '\r\n'), 'latin1');
  const text = wire.toString('latin1');
  const bodyStart = text.indexOf('\r\n\r\n', text.indexOf('Content-Transfer-Encoding: base64')) + 4;
  const bodyEnd = text.indexOf('\r\n--', bodyStart) + 2;
  const body = wire.subarray(bodyStart, bodyEnd);
  return {
    label,
    chunks: chunksOf(wire),
    base64: chunksOf(body),
    document: Buffer.from(body.toString('latin1'), 'base64'),
  };
}

function chunksOf(bytes: Buffer): Buffer[] {
  const chunks: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += CHUNK) chunks.push(bytes.subarray(at, at + CHUNK));
  return chunks;
}
