import { setTimeout as sleep } from 'node:timers/promises';
import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from '../logger.ts';

/**
 * Where Redis is: a URL, or Sentinels that name the current master (redis.sentinels). With
 * Sentinels, the URL still gives the password and database; ioredis asks a Sentinel for the
 * master on every (re)connect, so a failover is a reconnect to the promoted replica.
 */
export type RedisTarget =
  | string
  | { url: string; sentinels: ReadonlyArray<{ host: string; port: number }>; name: string };

/** The target a configuration describes: its URL, through its Sentinels when it lists any. */
export function redisTarget(
  url: string,
  redis: { readonly sentinels: readonly string[]; readonly sentinelName: string },
): RedisTarget {
  if (redis.sentinels.length === 0) return url;
  const sentinels = redis.sentinels.map((entry) => {
    const at = entry.lastIndexOf(':');
    return { host: entry.slice(0, at), port: Number(entry.slice(at + 1)) };
  });
  return { url, sentinels, name: redis.sentinelName };
}

function open(target: RedisTarget, options: RedisOptions): Redis {
  if (typeof target === 'string') return new Redis(target, options);
  const url = new URL(target.url);
  return new Redis({
    ...options,
    sentinels: target.sentinels.map(({ host, port }) => ({ host, port })),
    name: target.name,
    ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
    ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
    db: Number(url.pathname.slice(1)) || 0,
  });
}

/**
 * A connection for the SMTP path: no offline queue and one retry per command, so that when
 * Redis is away a command fails at once and the session answers 451 instead of waiting;
 * and a command timeout, so that a Redis that hangs without closing the connection gives
 * 451 too rather than a session stuck until its socket timeout.
 */
export function createIntakeConnection(target: RedisTarget, logger: Logger): Redis {
  return watch(
    open(target, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      // 10 s: far above any APPEND or MULTI of a healthy Redis, well below SMTP timeouts.
      commandTimeout: 10_000,
      connectionName: 'ingest-gateway:intake',
      retryStrategy: reconnectDelay,
    }),
    logger,
    'intake',
  );
}

/**
 * A connection for BullMQ workers and readers that should wait out a Redis restart:
 * BullMQ requires `maxRetriesPerRequest: null` for its blocking commands.
 */
export function createWorkerConnection(target: RedisTarget, logger: Logger, name = 'worker'): Redis {
  const options: RedisOptions = {
    maxRetriesPerRequest: null,
    connectionName: `ingest-gateway:${name}`,
    retryStrategy: reconnectDelay,
  };
  return watch(open(target, options), logger, name);
}

/** Reconnect quickly at first, then every 2 s at most: Redis restarts take seconds. */
function reconnectDelay(times: number): number {
  return Math.min(times * 100, 2000);
}

/** Log connection state changes once per change, not once per failed retry. */
function watch(client: Redis, logger: Logger, name: string): Redis {
  const log = logger.child({ redis: name });
  let lastError = '';
  client.on('error', (err: Error) => {
    if (err.message === lastError) return;
    lastError = err.message;
    log.warn({ err }, 'redis connection error');
  });
  client.on('ready', () => {
    if (lastError) log.info('redis connection restored');
    lastError = '';
  });
  return client;
}

/**
 * How long QUIT may wait for its answer, ms. A Redis that is frozen (or behind a dead link)
 * keeps the socket open and never answers: shutdown must not wait on it.
 */
const QUIT_TIMEOUT_MS = 2000;

/** Close a client: QUIT when it is connected, disconnect otherwise or when QUIT is not answered; never throws. */
export async function closeConnection(client: Redis): Promise<void> {
  if (client.status === 'end') return;
  if (client.status === 'ready') {
    const timers = new AbortController();
    const quit = client.quit().then(
      () => true,
      // QUIT failed because the connection went away meanwhile: disconnect below.
      () => false,
    );
    const answered = await Promise.race([
      quit,
      sleep(QUIT_TIMEOUT_MS, false, { signal: timers.signal }).catch(() => false),
    ]);
    timers.abort();
    if (answered) return;
  }
  client.disconnect();
}
