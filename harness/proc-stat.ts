/** Clock ticks per second of /proc's utime and stime (USER_HZ; 100 on every Linux this runs on). */
const TICKS_PER_SECOND = 100;

export interface ProcessCounters {
  /** CPU time in user mode so far, ms. */
  userMs: number;
  /**
   * CPU time in the kernel so far, ms. A redis-server's is mostly giving it the memory it
   * stores into (its page faults) and taking its AOF's appends into the page cache.
   */
  systemMs: number;
  /** Page faults so far that needed no disk read: each maps a page of memory touched first. */
  minorFaults: number;
}

/**
 * The counters of one line of Linux's /proc/PID/stat or /proc/PID/task/TID/stat (proc(5)):
 * a process's, or one of its threads'.
 */
export function parseProcStat(stat: string): ProcessCounters {
  // The command name (field 2) may hold spaces; the fields after its ")" are fixed.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // minflt, utime and stime are fields 10, 14 and 15, i.e. 7, 11 and 12 after the state (field 3).
  const ms = (ticks: string | undefined) => (Number(ticks) * 1000) / TICKS_PER_SECOND;
  return { userMs: ms(fields[11]), systemMs: ms(fields[12]), minorFaults: Number(fields[7]) };
}
