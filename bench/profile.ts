/**
 * Where the gateway's CPU goes under the intake load: `--role smtp` run with `node
 * --cpu-prof`, one process per load (100 KB PDFs, then 5 MB PDFs, 20 reused sessions), and
 * the samples taken while the load ran tallied by function and by owner (ioredis, mailsplit,
 * smtp-server, the gateway's own files, GC, ...). The store-once floor (smtp-server storing
 * each message once in Redis, `peers/drain-server.ts`) is profiled under the same load, and
 * the two are printed side by side per message: what the gateway spends beyond the floor, by
 * owner.
 *
 *   npm run bench -- profile
 *   BENCH_PROFILE_KEEP=/tmp/profiles npm run bench -- profile   # keep the .cpuprofile files
 */
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeMessageFile } from './load/pdf-message.ts';
import { LOAD_CORE, runLoad, SERVER_CORE } from './load/smtp-load.ts';
import {
  type CpuProfile,
  originalFrames,
  type ProfileTally,
  sourceMapsOnDisk,
  tallyProfile,
} from './measure/cpu-profile.ts';
import { loadAverage, pin } from './measure/process-stats.ts';
import { textTable } from './measure/text-table.ts';
import type { BenchServer } from './peers/bench-server.ts';
import { startDrainProcess } from './peers/drain-process.ts';
import { startGatewayProcess } from './peers/gateway-process.ts';

const KB = 1024;
const MB = 1024 * 1024;
const sourceRoot = new URL('..', import.meta.url).pathname;

interface Load {
  label: string;
  size: number;
  messages: number;
}

export async function profileBenchmark(env: NodeJS.ProcessEnv): Promise<void> {
  const loads: Load[] = [
    { label: '100 KB', size: 100 * KB, messages: Number(env.BENCH_SMALL ?? 600) },
    { label: '5 MB', size: 5 * MB, messages: Number(env.BENCH_LARGE ?? 40) },
  ];
  const dir = await mkdtemp(join(tmpdir(), 'bench-profile-'));
  await pin(process.pid, LOAD_CORE);
  try {
    for (const load of loads) {
      const file = await writeMessageFile(dir, load.size, `profile-${load.label.replace(' ', '')}`);
      const keep = join(env.BENCH_PROFILE_KEEP ?? dir, load.label.replace(' ', ''));
      const gateway = await profileServer(load, file.path, join(keep, 'gateway'), (nodeOptions) =>
        startGatewayProcess({ recipients: load.messages, env: { NODE_OPTIONS: nodeOptions } }),
      );
      const floor = await profileServer(load, file.path, join(keep, 'floor'), (nodeOptions) =>
        startDrainProcess({ store: true, env: { NODE_OPTIONS: nodeOptions } }),
      );
      printTally(load, gateway);
      printSideBySide(load, floor, gateway);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Starts a server under `--cpu-prof`, runs the load against it, and tallies the samples taken while it ran. */
async function profileServer(
  load: Load,
  messageFile: string,
  profileDir: string,
  start: (nodeOptions: string) => Promise<BenchServer>,
): Promise<ProfileTally> {
  await mkdir(profileDir, { recursive: true });
  const server = await start(`--cpu-prof --cpu-prof-dir=${profileDir}`);
  let window: { fromUs: number; toUs: number };
  try {
    for (const pid of server.pids) await pin(pid, SERVER_CORE);
    const fromUs = Number(process.hrtime.bigint() / 1000n);
    await runLoad({
      port: server.port,
      file: messageFile,
      messages: load.messages,
      sessions: 20,
      reuse: true,
    });
    window = { fromUs, toUs: Number(process.hrtime.bigint() / 1000n) };
  } finally {
    // The profile is written as the process exits.
    await server.close();
  }
  const [name] = (await readdir(profileDir)).filter((entry) => entry.endsWith('.cpuprofile'));
  if (name === undefined) throw new Error(`no profile in ${profileDir}`);
  const profile = JSON.parse(await readFile(join(profileDir, name), 'utf8')) as CpuProfile;
  // The gateway runs bundled (dist/): its frames are read through the chunks' source maps.
  return tallyProfile(originalFrames(profile, sourceMapsOnDisk()), sourceRoot, window);
}

function printTally(load: Load, tally: ProfileTally): void {
  const share = (ms: number) => `${((100 * ms) / tally.busyMs).toFixed(1)}%`;
  console.log(
    `\n${load.messages} x ${load.label} PDF: ${(tally.busyMs / 1000).toFixed(2)} s of CPU in the gateway's ` +
      `main thread while the load ran (${(tally.idleMs / 1000).toFixed(2)} s idle); load average ${loadAverage().toFixed(2)}`,
  );
  console.log(
    textTable([
      ['top 15 functions by self time', 'owner', 'called from', 'ms', 'share'],
      ...tally.functions
        .slice(0, 15)
        .map((entry) => [entry.name, entry.owner, entry.onBehalfOf, entry.ms.toFixed(0), share(entry.ms)]),
    ]),
  );
  console.log(
    textTable([
      ['owner (native and node built-ins counted to their caller)', 'ms', 'share'],
      ...tally.owners.slice(0, 15).map((entry) => [entry.owner, entry.ms.toFixed(0), share(entry.ms)]),
    ]),
  );
}

/**
 * Main-thread CPU per message by owner, the floor's beside the gateway's, largest difference
 * first: the owners both have (smtp-server, ioredis, GC, node's streams) show what the gateway
 * spends on the same work beyond the floor, the others what only the gateway does.
 */
function printSideBySide(load: Load, floor: ProfileTally, gateway: ProfileTally): void {
  const perMessage = (ms: number) => (1000 * ms) / load.messages;
  const floorOf = new Map(floor.owners.map((entry) => [entry.owner, entry.ms]));
  const gatewayOf = new Map(gateway.owners.map((entry) => [entry.owner, entry.ms]));
  const owners = [...new Set([...floorOf.keys(), ...gatewayOf.keys()])]
    .map((owner) => ({ owner, floor: floorOf.get(owner) ?? 0, gateway: gatewayOf.get(owner) ?? 0 }))
    .sort((a, b) => b.gateway - b.floor - (a.gateway - a.floor));
  const shown = owners.filter((entry) => Math.max(entry.floor, entry.gateway) >= 0.005 * gateway.busyMs);
  const rest = owners.filter((entry) => !shown.includes(entry));
  const restSum = (side: 'floor' | 'gateway') => rest.reduce((sum, entry) => sum + entry[side], 0);
  const row = (name: string, floorMs: number, gatewayMs: number) => [
    name,
    perMessage(floorMs).toFixed(0),
    perMessage(gatewayMs).toFixed(0),
    (perMessage(gatewayMs) - perMessage(floorMs)).toFixed(0),
  ];
  console.log(
    `\n${load.label}: main-thread CPU per message (µs), the store-once floor and the gateway under the same load ` +
      '(profiling slows both alike; compare them with each other, not with the intake table)',
  );
  console.log(
    textTable([
      ['owner', 'store-once floor', 'gateway', 'gateway - floor'],
      ...shown.map((entry) => row(entry.owner, entry.floor, entry.gateway)),
      row(`${rest.length} other owners`, restSum('floor'), restSum('gateway')),
      row('all', floor.busyMs, gateway.busyMs),
    ]),
  );
}
