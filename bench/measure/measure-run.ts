import { type LoadOptions, type LoadResult, runLoad } from '../load/smtp-load.ts';
import type { BenchServer } from '../peers/bench-server.ts';
import { loadAverage, memoryMiB, type ProcessCounters, processCounters, resetPeak } from './process-stats.ts';

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
  /** The part of that spent in the kernel (mostly its page faults and AOF appends), 0 without. */
  redisSystemMsPerMessage: number;
  /** Minor page faults of those processes per accepted message: pages of memory touched first. */
  redisMinorFaultsPerMessage: number;
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
  const allBefore = await totals(server.pids);
  const restBefore = await totals(rest);
  const result = await runLoad({ ...load, port: server.port });
  const all = difference(await totals(server.pids), allBefore);
  const restUsed = difference(await totals(rest), restBefore);
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
    cpuMsPerMessage: (all.userMs + all.systemMs) / accepted,
    redisCpuMsPerMessage: (restUsed.userMs + restUsed.systemMs) / accepted,
    redisSystemMsPerMessage: restUsed.systemMs / accepted,
    redisMinorFaultsPerMessage: restUsed.minorFaults / accepted,
    peakMiB: (await memoryMiB(first)).peak,
    loadAverage: loadAverage(),
    client: result.client,
  };
}

/** The counters of all `pids` added up (none: all zero). */
export async function totals(pids: readonly number[]): Promise<ProcessCounters> {
  let sum: ProcessCounters = { userMs: 0, systemMs: 0, minorFaults: 0 };
  for (const pid of pids) sum = add(sum, await processCounters(pid));
  return sum;
}

function add(a: ProcessCounters, b: ProcessCounters): ProcessCounters {
  return {
    userMs: a.userMs + b.userMs,
    systemMs: a.systemMs + b.systemMs,
    minorFaults: a.minorFaults + b.minorFaults,
  };
}

function difference(after: ProcessCounters, before: ProcessCounters): ProcessCounters {
  return {
    userMs: after.userMs - before.userMs,
    systemMs: after.systemMs - before.systemMs,
    minorFaults: after.minorFaults - before.minorFaults,
  };
}
