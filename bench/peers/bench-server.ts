/**
 * A server the benchmark loads: where it listens, the processes whose CPU time and memory
 * count (the gateway's includes its redis-server), and how many messages it has answered 250
 * by its own count.
 */
export interface BenchServer {
  readonly name: string;
  readonly port: number;
  /** The server's processes; the first is the one whose memory is reported. */
  readonly pids: readonly number[];
  /** Messages the server has accepted since it started, as it counts them. */
  accepted(): Promise<number>;
  /**
   * Servers that store into a Redis of their own: before each run, empty it and rewrite its AOF (see
   * emptyBenchRedis), so that every run stores into the same Redis, not one grown by the runs before.
   */
  reset?(): Promise<void>;
  close(): Promise<void>;
}
