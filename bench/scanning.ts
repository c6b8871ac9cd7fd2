/**
 * Scanning benchmark: the intake figure of the gateway (`--role smtp` with its redis-server)
 * without scanners, and with a private clamd and rspamd asked about every message
 * (harness/clamd.ts, harness/rspamd.ts), on the same load in the same run. The gateway's own
 * CPU per message (its redis-server included, the scanners not) shows what scanning costs the
 * gateway; the drop in messages/s is what the scanners themselves cost. Asserts nothing.
 *
 *   npm run bench -- scanning
 *   BENCH_ROUNDS=1 BENCH_SMALL=200 BENCH_LARGE=10 npm run bench -- scanning   # a quick look
 *
 * The gateways are pinned to core 0 and the load to core 1 as in `intake`; the scanners are
 * left unpinned (they take what is free on both cores, as beside a real gateway).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startClamd, type TestClamd } from '../harness/clamd.ts';
import { startRspamd, type TestRspamd } from '../harness/rspamd.ts';
import { writeMessageFile } from './load/pdf-message.ts';
import { LOAD_CORE, SERVER_CORE } from './load/smtp-load.ts';
import { measureRun, type RunFigures } from './measure/measure-run.ts';
import { loadAverage, median, pin } from './measure/process-stats.ts';
import { figure, textTable } from './measure/text-table.ts';
import { type GatewayUnderBench, startGatewayProcess } from './peers/gateway-process.ts';

const KB = 1024;
const MB = 1024 * 1024;
const SESSIONS = 20;

export async function scanningBenchmark(env: NodeJS.ProcessEnv): Promise<void> {
  const rounds = Number(env.BENCH_ROUNDS ?? 3);
  const small = Number(env.BENCH_SMALL ?? 600);
  const large = Number(env.BENCH_LARGE ?? 40);
  const slots = [
    { size: 100 * KB, label: '100 KB', messages: small },
    { size: 5 * MB, label: '5 MB', messages: large },
  ];
  const dir = await mkdtemp(join(tmpdir(), 'bench-scanning-'));
  await pin(process.pid, LOAD_CORE);
  let clamd: TestClamd | undefined;
  let rspamd: TestRspamd | undefined;
  const gateways: GatewayUnderBench[] = [];
  try {
    [clamd, rspamd] = await Promise.all([startClamd(), startRspamd()]);
    const recipients = Math.max(small, large);
    gateways.push(await startGatewayProcess({ recipients, name: 'gateway, no scanner' }));
    gateways.push(
      await startGatewayProcess({
        recipients,
        name: 'gateway + clamd + rspamd',
        scan: {
          clamav: { socket: clamd.socket, timeout: 60_000 },
          rspamd: { url: rspamd.url, timeout: 60_000 },
        },
      }),
    );
    for (const gateway of gateways) for (const pid of gateway.pids) await pin(pid, SERVER_CORE);
    const loadAtStart = loadAverage();
    console.log(
      `scanning: ${rounds} round(s), ${SESSIONS} sessions reusing their connections, ${small} x 100 KB and ${large} x 5 MB PDF per run; load average ${loadAtStart.toFixed(2)}`,
    );
    const runs = new Map<string, RunFigures[]>();
    for (let round = 1; round <= rounds; round++) {
      for (const slot of slots) {
        const file = await writeMessageFile(dir, slot.size, `s${round}-${slot.label.replace(' ', '')}`);
        for (const gateway of gateways) {
          await gateway.reset?.();
          const run = await measureRun(gateway, {
            file: file.path,
            messages: slot.messages,
            sessions: SESSIONS,
            reuse: true,
          });
          const key = `${gateway.name}|${slot.label}`;
          runs.set(key, [...(runs.get(key) ?? []), run]);
        }
      }
      console.log(`  round ${round} done, load average ${loadAverage().toFixed(2)}`);
    }
    const medianOf = (name: string, label: string, pick: (run: RunFigures) => number) =>
      median((runs.get(`${name}|${label}`) ?? []).map(pick));
    const rows = [['(medians)', '100 KB msgs/s', '5 MB msgs/s', 'gateway CPU ms/msg (100 KB / 5 MB)']];
    for (const gateway of gateways) {
      rows.push([
        gateway.name,
        figure(medianOf(gateway.name, '100 KB', (run) => run.messagesPerSecond)),
        figure(medianOf(gateway.name, '5 MB', (run) => run.messagesPerSecond)),
        `${figure(medianOf(gateway.name, '100 KB', (run) => run.cpuMsPerMessage))} / ${figure(medianOf(gateway.name, '5 MB', (run) => run.cpuMsPerMessage))}`,
      ]);
    }
    console.log(textTable(rows));
    const [plain, scanned] = gateways;
    if (plain && scanned) {
      for (const { label } of slots) {
        const ratio = (pick: (run: RunFigures) => number) =>
          medianOf(scanned.name, label, pick) / medianOf(plain.name, label, pick);
        console.log(
          `with scanners / without, ${label}: msgs/s ${ratio((run) => run.messagesPerSecond).toFixed(2)}, ` +
            `gateway CPU per message ${ratio((run) => run.cpuMsPerMessage).toFixed(2)}x`,
        );
      }
    }
    console.log(
      `load average: ${loadAtStart.toFixed(2)} at the start, ${loadAverage().toFixed(2)} at the end`,
    );
  } finally {
    await Promise.allSettled([
      ...gateways.map((gateway) => gateway.close()),
      clamd?.close(),
      rspamd?.close(),
    ]);
    await rm(dir, { recursive: true, force: true });
  }
}
