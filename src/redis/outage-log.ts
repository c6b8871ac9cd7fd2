import type { Logger } from '../logger.ts';
import { isRedisUnavailable } from './unavailable.ts';

/**
 * One account of a Redis outage for the whole process, however many connections see it: a
 * line when the first connection loses Redis, then at most one a minute while it lasts, with
 * how many transactions were refused and how many reconnects failed since the last line, and
 * a line when the last connection has it back. Per-connection, per-retry lines would bury the
 * log under one event.
 */
export interface RedisOutageLog {
  /** A connection reported an error (ioredis emits one per failed (re)connect). */
  lost(connection: string, err: Error): void;
  /** A connection is ready again. */
  ready(connection: string): void;
  /** An SMTP transaction failed inside: counted as refused while Redis is away. */
  countRefused(): void;
  /**
   * An error a BullMQ worker or queue reported: true when it is Redis being away during an
   * outage, counted as a failed command; also when BullMQ's own connections (its blocking
   * connection, which this log does not watch) see Redis away a moment before the watched ones
   * do or finish reconnecting a moment after (for up to `settleMs`, at debug). False when it is
   * something else, or when only BullMQ's connections have gone on failing for longer than
   * that: then the caller logs each.
   */
  absorbs(err: Error): boolean;
  /** Whether a connection is without Redis now. */
  readonly down: boolean;
}

export interface RedisOutageLogOptions {
  logger: Logger;
  /** Milliseconds between the lines while an outage lasts; default REPORT_EVERY_MS. */
  reportEveryMs?: number;
  /** Milliseconds after an outage ends in which Redis-away errors still belong to it; default SETTLE_MS. */
  settleMs?: number;
  /** Injected for tests; default Date.now. */
  now?: () => number;
}

/** Milliseconds between two lines about one outage: a minute, so a long outage is a line a minute. */
const REPORT_EVERY_MS = 60_000;

/**
 * Milliseconds after the watched connections are back in which a BullMQ connection may still
 * report the outage: its own reconnect delay (2 s at most, inherited from ours) twice over,
 * and room for a loaded machine.
 */
const SETTLE_MS = 10_000;

export function createRedisOutageLog(options: RedisOutageLogOptions): RedisOutageLog {
  const log = options.logger.child({ component: 'redis' });
  const reportEveryMs = options.reportEveryMs ?? REPORT_EVERY_MS;
  const now = options.now ?? Date.now;
  const settleMs = options.settleMs ?? SETTLE_MS;
  const lostConnections = new Set<string>();
  let since = 0;
  let lastReport = 0;
  let counts = { refusedTransactions: 0, failedCommands: 0, failedReconnects: 0 };
  let totalRefused = 0;
  let endedAt = Number.NEGATIVE_INFINITY;
  // Redis-away errors while no watched connection has lost Redis: when the run of them began.
  let unexplainedSince = Number.NEGATIVE_INFINITY;
  let lastUnexplained = Number.NEGATIVE_INFINITY;

  function reportIfDue(): void {
    const at = now();
    if (at - lastReport < reportEveryMs) return;
    log.warn({ downForMs: at - since, ...counts }, 'Redis still unavailable');
    lastReport = at;
    counts = { refusedTransactions: 0, failedCommands: 0, failedReconnects: 0 };
  }

  return {
    lost(connection, err) {
      // Per connection, once per change, at debug: which connection lost Redis and got it back.
      if (!lostConnections.has(connection)) {
        log.debug({ redis: connection, reason: err.message }, 'redis connection lost');
      }
      if (lostConnections.size === 0) {
        since = now();
        lastReport = since;
        counts = { refusedTransactions: 0, failedCommands: 0, failedReconnects: 0 };
        totalRefused = 0;
        lostConnections.add(connection);
        log.warn({ connection, reason: err.message }, 'Redis unavailable');
        return;
      }
      if (lostConnections.has(connection)) counts.failedReconnects++;
      lostConnections.add(connection);
      reportIfDue();
    },
    ready(connection) {
      if (!lostConnections.delete(connection)) return;
      log.debug({ redis: connection }, 'redis connection ready');
      if (lostConnections.size > 0) return;
      endedAt = now();
      log.info({ downForMs: now() - since, refusedTransactions: totalRefused }, 'Redis available again');
    },
    countRefused() {
      if (lostConnections.size === 0) return;
      counts.refusedTransactions++;
      totalRefused++;
      reportIfDue();
    },
    absorbs(err) {
      if (!isRedisUnavailable(err)) return false;
      if (lostConnections.size === 0) {
        const at = now();
        if (at - lastUnexplained > settleMs) unexplainedSince = at;
        lastUnexplained = at;
        if (at - endedAt > settleMs && at - unexplainedSince > settleMs) return false;
        log.debug({ reason: err.message }, 'redis error while the watched connections have Redis');
        return true;
      }
      counts.failedCommands++;
      reportIfDue();
      return true;
    },
    get down() {
      return lostConnections.size > 0;
    },
  };
}
