/**
 * Intake benchmark: how fast the gateway accepts, parses, stores and enqueues mail, and how
 * much memory it takes while large attachments arrive at once. Prints figures; asserts
 * nothing (DESIGN.md, "Performance the design must allow", for the figures to compare).
 *
 *   npm run bench                      # both measurements (then bench/hostile-stalls.ts)
 *   BENCH_MESSAGES=2000 npm run bench  # more messages for the throughput run
 *
 * The gateway runs as its own process (`ingest-gateway start --role smtp`, so uploads do not
 * compete for the CPU), against a private redis-server; the senders reuse their connections,
 * as DESIGN.md's comparison does.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DaemonProcess, startDaemon, writeDaemonConfig } from '../test/support/daemon-process.ts';
import { composeMessage } from '../test/support/messages.ts';
import { startRedis } from '../test/support/redis-server.ts';
import { SmtpSession } from '../test/support/smtp-session.ts';

const sessions = 20;

async function peakRssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kib / 1024;
}

async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

/** `count` messages over `sessions` connections, each connection reused for its share. */
async function deliverAll(daemon: DaemonProcess, messages: Buffer[]): Promise<number> {
  let next = 0;
  let accepted = 0;
  await Promise.all(
    Array.from({ length: sessions }, async () => {
      const session = new SmtpSession(daemon.smtpPort);
      await session.reply();
      await session.command('EHLO bench.test');
      for (let i = next++; i < messages.length; i = next++) {
        const message = messages[i];
        if (!message) continue;
        await session.command('MAIL FROM:<bench@acme.example>');
        await session.command('RCPT TO:<documents@ingest.test>');
        const reply = await session.data(message);
        if (reply.code === 250) accepted++;
        else throw new Error(`not accepted: ${reply.text}`);
      }
      await session.close();
    }),
  );
  return accepted;
}

async function main(): Promise<void> {
  const redis = await startRedis({ config: { appendonly: 'yes', appendfsync: 'everysec' } });
  const dir = await mkdtemp(join(tmpdir(), 'bench-'));
  const configPath = join(dir, 'gateway.yaml');
  await writeDaemonConfig(configPath, {
    smtp: { maxMessageSize: 52428800 },
    redis: { url: redis.url, prefix: 'bench' },
    log: { level: 'warn' },
    workspaces: [{ identifier: 'ws', ingestEmail: 'documents@ingest.test' }],
  });
  // Info level: the harness waits for the daemon's "ready" line.
  const daemon = await startDaemon(configPath, 'smtp', 'info');
  const pid = daemon.pid;
  try {
    // Memory first, on a fresh process: twenty 10 MB attachments arriving at once.
    const before = await rssMiB(pid);
    const big = await Promise.all(
      Array.from({ length: sessions }, (_, i) =>
        composeMessage({
          attachments: [{ filename: `big${i}.pdf`, content: pdfOf(10 * 1024 * 1024, `big-${i}`) }],
        }),
      ),
    );
    const peakBefore = await peakRssMiB(pid);
    await deliverAll(daemon, big);
    const peak = await peakRssMiB(pid);
    console.log(
      `twenty 10 MB attachments at once: gateway RSS ${before.toFixed(0)} MiB before, peak ${peak.toFixed(0)} MiB ` +
        `(peak before this run ${peakBefore.toFixed(0)} MiB)`,
    );
    const count = Number(process.env.BENCH_MESSAGES ?? 600);
    for (const [label, size] of [
      ['100 KB PDF', 100 * 1024],
      ['5 MB PDF', 5 * 1024 * 1024],
    ] as const) {
      const n = size > 1024 * 1024 ? Math.max(40, Math.floor(count / 15)) : count;
      const messages = await Promise.all(
        Array.from({ length: n }, (_, i) =>
          composeMessage({ attachments: [{ filename: `b${i}.pdf`, content: pdfOf(size, `${label}-${i}`) }] }),
        ),
      );
      const started = performance.now();
      const accepted = await deliverAll(daemon, messages);
      const seconds = (performance.now() - started) / 1000;
      const megabytes = messages.reduce((sum, message) => sum + message.length, 0) / 1024 / 1024;
      console.log(
        `${label}: ${accepted} messages in ${seconds.toFixed(2)} s = ${(accepted / seconds).toFixed(1)} messages/s, ` +
          `${(megabytes / seconds).toFixed(1)} MB/s of DATA (${sessions} reused connections)`,
      );
    }
  } finally {
    daemon.signal('SIGTERM');
    await daemon.exited;
    await redis.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** A valid PDF header and trailer around `size` bytes of filler, distinct per label. */
function pdfOf(size: number, label: string): Buffer {
  const head = Buffer.from(`%PDF-1.4\n%${label}\n`);
  const tail = Buffer.from('\n%%EOF\n');
  return Buffer.concat([head, Buffer.alloc(Math.max(0, size - head.length - tail.length), 0x20), tail]);
}

await main();
