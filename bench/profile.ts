/**
 * Where the gateway's CPU goes under the intake load: `--role smtp` run with `node
 * --cpu-prof`, one process per load (100 KB PDFs, then 5 MB PDFs, 20 reused sessions), and
 * the samples taken while the load ran tallied by function and by owner (ioredis, mailsplit,
 * smtp-server, the gateway's own files, GC, ...).
 *
 *   npm run bench -- profile
 *   BENCH_PROFILE_KEEP=/tmp/profiles npm run bench -- profile   # keep the .cpuprofile files
 */
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeMessageFile } from './load/pdf-message.ts';
import { LOAD_CORE, runLoad, SERVER_CORE } from './load/smtp-load.ts';
import { type CpuProfile, originalFrames, sourceMapsOnDisk, tallyProfile } from './measure/cpu-profile.ts';
import { loadAverage, pin } from './measure/process-stats.ts';
import { textTable } from './measure/text-table.ts';
import { startGatewayProcess } from './peers/gateway-process.ts';

const KB = 1024;
const MB = 1024 * 1024;
const sourceRoot = new URL('..', import.meta.url).pathname;

export async function profileBenchmark(env: NodeJS.ProcessEnv): Promise<void> {
  const loads = [
    { label: '100 KB', size: 100 * KB, messages: Number(env.BENCH_SMALL ?? 600) },
    { label: '5 MB', size: 5 * MB, messages: Number(env.BENCH_LARGE ?? 40) },
  ];
  const dir = await mkdtemp(join(tmpdir(), 'bench-profile-'));
  await pin(process.pid, LOAD_CORE);
  try {
    for (const load of loads) {
      const profileDir = join(env.BENCH_PROFILE_KEEP ?? dir, load.label.replace(' ', ''));
      await mkdir(profileDir, { recursive: true });
      const gateway = await startGatewayProcess({
        recipients: load.messages,
        env: { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profileDir}` },
      });
      let window: { fromUs: number; toUs: number };
      try {
        for (const pid of gateway.pids) await pin(pid, SERVER_CORE);
        const file = await writeMessageFile(dir, load.size, `profile-${load.label.replace(' ', '')}`);
        const fromUs = Number(process.hrtime.bigint() / 1000n);
        await runLoad({
          port: gateway.port,
          file: file.path,
          messages: load.messages,
          sessions: 20,
          reuse: true,
        });
        window = { fromUs, toUs: Number(process.hrtime.bigint() / 1000n) };
      } finally {
        // The profile is written as the process exits.
        await gateway.close();
      }
      const [name] = (await readdir(profileDir)).filter((entry) => entry.endsWith('.cpuprofile'));
      if (name === undefined) throw new Error(`no profile in ${profileDir}`);
      const profile = JSON.parse(await readFile(join(profileDir, name), 'utf8')) as CpuProfile;
      // The gateway runs bundled (dist/): its frames are read through the chunks' source maps.
      const tally = tallyProfile(originalFrames(profile, sourceMapsOnDisk()), sourceRoot, window);
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
            .map((entry) => [
              entry.name,
              entry.owner,
              entry.onBehalfOf,
              entry.ms.toFixed(0),
              share(entry.ms),
            ]),
        ]),
      );
      console.log(
        textTable([
          ['owner (native and node built-ins counted to their caller)', 'ms', 'share'],
          ...tally.owners.slice(0, 15).map((entry) => [entry.owner, entry.ms.toFixed(0), share(entry.ms)]),
        ]),
      );
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
