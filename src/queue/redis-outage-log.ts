import type { Logger } from '../logger.ts';
import { isRedisUnavailable } from './redis-unavailable.ts';

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
   * outage, counted as a failed command; false when it is something else, for the caller to log.
   */
  absorbs(err: Error): boolean;
  /** Whether a connection is without Redis now. */
  readonly down: boolean;
}

export interface RedisOutageLogOptions {
  logger: Logger;
  /** Milliseconds between the lines while an outage lasts; default one minute. */
  reportEveryMs?: number;
  /** Injected for tests; default Date.now. */
  now?: () => number;
}

export function createRedisOutageLog(options: RedisOutageLogOptions): RedisOutageLog {
  const log = options.logger.child({ component: 'redis' });
  const reportEveryMs = options.reportEveryMs ?? 60_000;
  const now = options.now ?? Date.now;
  const lostConnections = new Set<string>();
  let since = 0;
  let lastReport = 0;
  let counts = { refusedTransactions: 0, failedCommands: 0, failedReconnects: 0 };
  let totalRefused = 0;

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
      log.info({ downForMs: now() - since, refusedTransactions: totalRefused }, 'Redis available again');
    },
    countRefused() {
      if (lostConnections.size === 0) return;
      counts.refusedTransactions++;
      totalRefused++;
      reportIfDue();
    },
    absorbs(err) {
      if (lostConnections.size === 0 || !isRedisUnavailable(err)) return false;
      counts.failedCommands++;
      reportIfDue();
      return true;
    },
    get down() {
      return lostConnections.size > 0;
    },
  };
}
