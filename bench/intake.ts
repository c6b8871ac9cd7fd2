/**
 * Intake benchmark: the gateway (`--role smtp` with its redis-server) against three
 * peers on the same load in the same run: smtp-server draining DATA (the Node floor),
 * smtp-server storing each message once in a redis-server of its own (the floor of store-once:
 * the bytes in from the client and out to Redis, nothing else) and Haraka accepting and
 * discarding. Prints a table per connection mode (messages/s, server
 * CPU ms per message, peak RSS), the ratios, Redis memory per message against its size on
 * the wire, and the gateway's CPU for a 5 MB message against a 100 KB one. Asserts nothing
 * (docs/architecture.md, "Performance targets", has the figures to compare with).
 *
 *   npm run bench -- intake
 *   BENCH_WARMUP=0 BENCH_ROUNDS=1 BENCH_SMALL=300 BENCH_LARGE=20 npm run bench -- intake   # a quick look
 *
 * Each server system is pinned to core 0 (the gateway and its redis-server together), the
 * load (smtp-source) and this process to core 1. Every (size, mode) slot of a round gets a
 * fresh message file (new random bytes) that all three servers receive, so the gateway's
 * duplicate-delivery check never skips a message; medians of the rounds are printed.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeMessageFile } from './load/pdf-message.ts';
import { LOAD_CORE, SERVER_CORE } from './load/smtp-load.ts';
import { measureRun, type RunFigures } from './measure/measure-run.ts';
import { canPin, loadAverage, median, pin } from './measure/process-stats.ts';
import { figure, textTable } from './measure/text-table.ts';
import type { BenchServer } from './peers/bench-server.ts';
import { startDrainProcess } from './peers/drain-process.ts';
import { type GatewayUnderBench, startGatewayProcess } from './peers/gateway-process.ts';
import { startHarakaProcess } from './peers/haraka-process.ts';

const KB = 1024;
const MB = 1024 * 1024;
const SESSIONS = 20;

interface Slot {
  size: number;
  sizeLabel: string;
  reuse: boolean;
  messages: number;
}

interface SlotFigures {
  runs: RunFigures[];
  /** Gateway only: Redis used_memory added per accepted message, bytes. */
  redisBytesPerMessage: number[];
  wireBytes: number;
}

export async function intakeBenchmark(env: NodeJS.ProcessEnv): Promise<void> {
  const rounds = Number(env.BENCH_ROUNDS ?? 3);
  const warmUps = Number(env.BENCH_WARMUP ?? 1);
  const small = Number(env.BENCH_SMALL ?? 600);
  const large = Number(env.BENCH_LARGE ?? 40);
  const slots: Slot[] = [];
  for (const reuse of [true, false]) {
    slots.push({ size: 100 * KB, sizeLabel: '100 KB', reuse, messages: small });
    slots.push({ size: 5 * MB, sizeLabel: '5 MB', reuse, messages: large });
  }
  const dir = await mkdtemp(join(tmpdir(), 'bench-intake-'));
  await pin(process.pid, LOAD_CORE);
  const servers: BenchServer[] = [];
  let gateway: GatewayUnderBench | undefined;
  try {
    servers.push(await startDrainProcess());
    servers.push(await startDrainProcess({ store: true }));
    servers.push(await startHarakaProcess());
    gateway = await startGatewayProcess({ recipients: Math.max(small, large) });
    servers.push(gateway);
    for (const server of servers) for (const pid of server.pids) await pin(pid, SERVER_CORE);
    const loadAtStart = loadAverage();
    console.log(
      `intake: ${warmUps} warm-up and ${rounds} measured round(s), ${SESSIONS} sessions, ${small} x 100 KB and ${large} x 5 MB PDF per run; ` +
        `${canPin() ? `servers on core ${SERVER_CORE}, load on core ${LOAD_CORE}` : 'one core: nothing pinned'}; ` +
        `load average ${loadAtStart.toFixed(2)}`,
    );
    const figures = new Map<string, SlotFigures>();
    const key = (server: BenchServer, slot: Slot) => `${server.name}|${slot.sizeLabel}|${slot.reuse}`;
    // Warm-up rounds (numbered from 1 - warmUps to 0) run every slot on every server, and
    // their figures are dropped: a server's first thousand or so messages cost it more (the
    // gateway's 100 KB messages, four series of loads: 1.6-2.1 ms of user time each in its
    // first 600, 1.1-1.5 in the next 600, 1.0-1.4 after), and the medians are of the rounds after.
    for (let round = 1 - warmUps; round <= rounds; round++) {
      const measured = round >= 1;
      for (const slot of slots) {
        const file = await writeMessageFile(
          dir,
          slot.size,
          `${measured ? 'r' : 'w'}${round}-${slot.sizeLabel.replace(' ', '')}-${slot.reuse}`,
        );
        for (const server of servers) {
          await server.reset?.();
          const usedBefore = server === gateway ? await gateway.redisUsedMemory() : 0;
          const run = await measureRun(server, {
            file: file.path,
            messages: slot.messages,
            sessions: SESSIONS,
            reuse: slot.reuse,
          });
          if (!measured) continue;
          const entry = figures.get(key(server, slot)) ?? {
            runs: [],
            redisBytesPerMessage: [],
            wireBytes: file.wireBytes,
          };
          entry.runs.push(run);
          if (server === gateway) {
            entry.redisBytesPerMessage.push(((await gateway.redisUsedMemory()) - usedBefore) / run.accepted);
          }
          figures.set(key(server, slot), entry);
        }
      }
      console.log(
        `  ${measured ? `round ${round}` : 'warm-up round'} done, load average ${loadAverage().toFixed(2)}`,
      );
    }
    report(servers, slots, figures, key, gateway);
    console.log(
      `load average: ${loadAtStart.toFixed(2)} at the start, ${loadAverage().toFixed(2)} at the end`,
    );
  } finally {
    await Promise.allSettled(servers.map((server) => server.close()));
    await rm(dir, { recursive: true, force: true });
  }
}

function report(
  servers: readonly BenchServer[],
  slots: readonly Slot[],
  figures: ReadonlyMap<string, SlotFigures>,
  key: (server: BenchServer, slot: Slot) => string,
  gateway: GatewayUnderBench,
): void {
  const runsOf = (server: BenchServer, slot: Slot | undefined) =>
    slot === undefined ? [] : (figures.get(key(server, slot))?.runs ?? []);
  const medianOf = (runs: readonly RunFigures[], pick: (run: RunFigures) => number) => median(runs.map(pick));
  const [drain, storing, haraka] = servers;
  for (const reuse of [true, false]) {
    const [smallSlot, largeSlot] = slots.filter((slot) => slot.reuse === reuse);
    console.log(
      `\n${reuse ? `${SESSIONS} sessions reusing their connections` : `one message per connection, ${SESSIONS} at a time`} (medians)`,
    );
    const rows = [
      [
        '',
        '100 KB PDF msgs/s',
        '5 MB PDF msgs/s',
        'server CPU ms/msg (100 KB / 5 MB)',
        'of it redis-server (kernel; page faults)',
        'peak RSS MiB',
      ],
    ];
    for (const server of servers) {
      const smallRuns = runsOf(server, smallSlot);
      const largeRuns = runsOf(server, largeSlot);
      const peaks = [...smallRuns, ...largeRuns].map((run) => run.peakMiB);
      rows.push([
        server === gateway ? 'ingest-gateway + its Redis' : server.name,
        figure(medianOf(smallRuns, (run) => run.messagesPerSecond)),
        figure(medianOf(largeRuns, (run) => run.messagesPerSecond)),
        `${figure(medianOf(smallRuns, (run) => run.cpuMsPerMessage))} / ${figure(medianOf(largeRuns, (run) => run.cpuMsPerMessage))}`,
        server.pids.length > 1
          ? [smallRuns, largeRuns]
              .map(
                (runs) =>
                  `${figure(medianOf(runs, (run) => run.redisCpuMsPerMessage))} ` +
                  `(${figure(medianOf(runs, (run) => run.redisSystemMsPerMessage))}; ` +
                  `${medianOf(runs, (run) => run.redisMinorFaultsPerMessage).toFixed(0)})`,
              )
              .join(' / ')
          : '',
        `${Math.min(...peaks).toFixed(0)}-${Math.max(...peaks).toFixed(0)}`,
      ]);
    }
    console.log(textTable(rows));
    if (storing !== undefined && haraka !== undefined) {
      const ratio = (slot: Slot | undefined) =>
        medianOf(runsOf(storing, slot), (run) => run.messagesPerSecond) /
        medianOf(runsOf(haraka, slot), (run) => run.messagesPerSecond);
      console.log(
        `${storing.name} / ${haraka.name}: msgs/s ${ratio(smallSlot).toFixed(2)} (100 KB), ${ratio(largeSlot).toFixed(2)} (5 MB)`,
      );
    }
    for (const peer of [haraka, storing, drain]) {
      if (peer === undefined) continue;
      const ratio = (slot: Slot | undefined, pick: (run: RunFigures) => number) =>
        medianOf(runsOf(gateway, slot), pick) / medianOf(runsOf(peer, slot), pick);
      console.log(
        `gateway / ${peer.name}: msgs/s ${ratio(smallSlot, (run) => run.messagesPerSecond).toFixed(2)} (100 KB), ` +
          `${ratio(largeSlot, (run) => run.messagesPerSecond).toFixed(2)} (5 MB); ` +
          `CPU per message ${ratio(smallSlot, (run) => run.cpuMsPerMessage).toFixed(2)}x (100 KB), ` +
          `${ratio(largeSlot, (run) => run.cpuMsPerMessage).toFixed(2)}x (5 MB)`,
      );
    }
    const gatewayCpu = (slot: Slot | undefined) =>
      medianOf(runsOf(gateway, slot), (run) => run.cpuMsPerMessage);
    console.log(
      `gateway CPU 5 MB / CPU 100 KB: ${(gatewayCpu(largeSlot) / gatewayCpu(smallSlot)).toFixed(1)}x (target: at most 40x)`,
    );
    for (const slot of [smallSlot, largeSlot]) {
      if (slot === undefined) continue;
      const entry = figures.get(key(gateway, slot));
      if (!entry) continue;
      const perMessage = median(entry.redisBytesPerMessage);
      console.log(
        `Redis used_memory per ${slot.sizeLabel} message: ${(perMessage / KB).toFixed(0)} KiB for ` +
          `${(entry.wireBytes / KB).toFixed(0)} KiB on the wire = ${(perMessage / entry.wireBytes).toFixed(2)}x (target: at most 1.1x)`,
      );
    }
    const loads = [...runsOf(gateway, smallSlot), ...runsOf(gateway, largeSlot)].map(
      (run) => run.loadAverage,
    );
    console.log(
      `load average during these runs: ${Math.min(...loads).toFixed(2)}-${Math.max(...loads).toFixed(2)}`,
    );
  }
}
