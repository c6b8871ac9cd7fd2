import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from '../logger.ts';

/**
 * A connection for the SMTP path: no offline queue and one retry per command, so that when
 * Redis is away a command fails at once and the session answers 451 instead of waiting;
 * and a command timeout, so that a Redis that hangs without closing the connection gives
 * 451 too rather than a session stuck until its socket timeout.
 */
export function createIntakeConnection(url: string, logger: Logger): Redis {
  return watch(
    new Redis(url, {
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
export function createWorkerConnection(url: string, logger: Logger, name = 'worker'): Redis {
  const options: RedisOptions = {
    maxRetriesPerRequest: null,
    connectionName: `ingest-gateway:${name}`,
    retryStrategy: reconnectDelay,
  };
  return watch(new Redis(url, options), logger, name);
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

/** Close a client: QUIT when it is connected, disconnect otherwise; never throws. */
export async function closeConnection(client: Redis): Promise<void> {
  if (client.status === 'end') return;
  try {
    if (client.status === 'ready') {
      await client.quit();
      return;
    }
  } catch {
    // QUIT failed because the connection went away meanwhile: disconnect below.
  }
  client.disconnect();
}
