import { setTimeout as sleep } from 'node:timers/promises';
import type { RedisClient } from './connections.ts';

/**
 * The Redis connections the running roles cannot work without, by name, for readiness.
 * Each connection reconnects on its own after Redis comes back, one sooner than another: a
 * ping on one says nothing of the others, and a message that reaches an instance whose queue
 * connection is still reconnecting is refused (451) although another connection answers.
 */
export interface NeededConnections {
  /** A role needs this connection; the same name again is the same connection. */
  need(name: string, client: RedisClient): void;
  /** Each needed connection's state, by name: `ready` when it is ready and answers a PING. */
  check(): Promise<Record<string, ConnectionState>>;
}

/**
 * `ready`; `no answer` when a ready connection did not answer a PING in time; otherwise
 * ioredis's status (`connecting`, `reconnecting`, `end`, ...).
 */
export type ConnectionState = string;

/**
 * Milliseconds a readiness PING may take. A worker's connection queues commands while it
 * reconnects and never times them out: readiness must answer all the same.
 */
const PING_TIMEOUT_MS = 2000;

export function createNeededConnections(): NeededConnections {
  const clients = new Map<string, RedisClient>();
  return {
    need(name, client) {
      clients.set(name, client);
    },
    async check() {
      const states = await Promise.all(
        [...clients].map(async ([name, client]) => [name, await state(client)] as const),
      );
      return Object.fromEntries(states);
    },
  };
}

async function state(client: RedisClient): Promise<ConnectionState> {
  if (client.status !== 'ready') return client.status;
  const timers = new AbortController();
  const answered = await Promise.race([
    client.ping().then(
      (reply) => reply === 'PONG',
      () => false,
    ),
    sleep(PING_TIMEOUT_MS, false, { signal: timers.signal }).catch(() => false),
  ]);
  timers.abort();
  return answered ? 'ready' : 'no answer';
}
