import { type LoadOptions, type LoadResult, runLoad } from '../load/smtp-load.ts';
import type { BenchServer } from '../peers/bench-server.ts';
import { cpuTimes, loadAverage, memoryMiB, resetPeak } from './process-stats.ts';

/** One load against one server, as the server saw it. */
export interface RunFigures {
  /** 250s the server counted during the run. */
  accepted: number;
  seconds: number;
  messagesPerSecond: number;
  /** CPU time of all the server's processes (the gateway's Redis included) per accepted message. */
  cpuMsPerMessage: number;
  /** The part of it spent by the server's processes after the first (its redis-server), 0 without. */
  redisCpuMsPerMessage: number;
  /** The part of that spent in the kernel (with AOF on, mostly writing the file), 0 without. */
  redisSystemMsPerMessage: number;
  /** Peak resident memory of the server's first process during the run, MiB. */
  peakMiB: number;
  /** 1-minute load average when the run ended. */
  loadAverage: number;
  client: LoadResult['client'];
}

export async function measureRun(server: BenchServer, load: Omit<LoadOptions, 'port'>): Promise<RunFigures> {
  const [first] = server.pids;
  if (first === undefined) throw new Error(`${server.name}: no process`);
  await resetPeak(first);
  const acceptedBefore = await server.accepted();
  const rest = server.pids.slice(1);
  const cpuBefore = await totalCpuMs(server.pids);
  const restBefore = await totalCpuMs(rest);
  const restSystemBefore = await totalCpuMs(rest, 'kernel');
  const result = await runLoad({ ...load, port: server.port });
  const cpu = (await totalCpuMs(server.pids)) - cpuBefore;
  const restCpu = (await totalCpuMs(rest)) - restBefore;
  const restSystem = (await totalCpuMs(rest, 'kernel')) - restSystemBefore;
  const accepted = (await server.accepted()) - acceptedBefore;
  if (accepted !== load.messages) {
    throw new Error(
      `${server.name}: the load sent ${load.messages} messages, the server accepted ${accepted}`,
    );
  }
  return {
    accepted,
    seconds: result.seconds,
    messagesPerSecond: accepted / result.seconds,
    cpuMsPerMessage: cpu / accepted,
    redisCpuMsPerMessage: restCpu / accepted,
    redisSystemMsPerMessage: restSystem / accepted,
    peakMiB: (await memoryMiB(first)).peak,
    loadAverage: loadAverage(),
    client: result.client,
  };
}

/** The CPU time of all `pids`, ms: user and kernel, or (`kernel`) the kernel's part alone. */
export async function totalCpuMs(pids: readonly number[], part: 'all' | 'kernel' = 'all'): Promise<number> {
  let total = 0;
  for (const pid of pids) {
    const { userMs, systemMs } = await cpuTimes(pid);
    total += part === 'kernel' ? systemMs : userMs + systemMs;
  }
  return total;
}
