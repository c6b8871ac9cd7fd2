import type { RedisClient } from '../redis/connections.ts';

/**
 * Wakes long polls (GET /v1/messages?wait=) when an attachment reaches a final state: the
 * ledger publishes the message id on keys.settledChannel, in whichever process the worker
 * runs. Pub/sub rather than polling Redis per waiting request: a waiter costs nothing until
 * something settles. Pub/sub delivers at most once (a subscriber reconnecting misses what
 * was published meanwhile), so waiters also re-check on a slow timer of their own.
 */
export interface SettleNotifier {
  /** Resolves once subscribed; a waiter registered after it hears every later publish. */
  ready(): Promise<void>;
  /** Resolves at the next settle announcement, or when `signal` aborts. */
  next(signal: AbortSignal): Promise<void>;
  /** Calls `listener` with the message id of every announcement until the returned function is called. */
  listen(listener: (messageId: string) => void): () => void;
  close(): Promise<void>;
}

/**
 * @param connect opens the subscriber connection: one that queues commands while it
 *   (re)connects, and resubscribes by itself after a reconnect (ioredis does, by default).
 */
export function createSettleNotifier(connect: () => RedisClient, channel: string): SettleNotifier {
  const waiters = new Set<() => void>();
  const listeners = new Set<(messageId: string) => void>();
  let subscriber: RedisClient | undefined;
  let subscribed: Promise<void> | undefined;

  function wake(): void {
    const woken = [...waiters];
    waiters.clear();
    for (const resolve of woken) resolve();
  }

  function announce(_channel: string, messageId: string): void {
    wake();
    for (const listener of listeners) listener(messageId);
  }

  return {
    ready() {
      // Subscribed on first use: a gateway nobody long-polls keeps no extra connection.
      subscribed ??= (async () => {
        const connection = connect();
        subscriber = connection;
        connection.on('message', announce);
        await connection.subscribe(channel);
      })();
      return subscribed;
    },
    next(signal) {
      return new Promise<void>((resolve) => {
        if (signal.aborted) return resolve();
        const done = () => {
          waiters.delete(done);
          signal.removeEventListener('abort', done);
          resolve();
        };
        waiters.add(done);
        signal.addEventListener('abort', done, { once: true });
      });
    },
    listen(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async close() {
      listeners.clear();
      wake();
      const connection = subscriber;
      subscriber = undefined;
      subscribed = undefined;
      connection?.disconnect();
    },
  };
}
