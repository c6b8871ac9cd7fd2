import type { RedisClient } from './redis-connections.ts';

export interface AppendWriterOptions {
  /** Bytes gathered before one APPEND is sent; default 256 KiB: large enough that a 20 MB part is ~80 round trips, small enough to keep per-session memory low. */
  chunkBytes?: number;
  /** APPENDs allowed in flight before write() waits; default 2: keeps the socket busy while bounding memory per writer to about chunkBytes × 3. */
  maxInFlight?: number;
  /** Seconds the key lives from its first write (the commit sets the final TTL); default 86400: a session that dies mid-DATA leaves nothing behind for long. */
  ttlSeconds?: number;
}

/**
 * Streams bytes into one Redis string with APPEND, with backpressure: write() resolves only
 * when fewer than `maxInFlight` APPENDs are outstanding. Nothing is held beyond one chunk
 * being gathered and the chunks in flight.
 */
export interface AppendWriter {
  readonly key: string;
  /** Bytes accepted so far. */
  readonly bytes: number;
  write(chunk: Buffer): Promise<void>;
  end(): Promise<void>;
  discard(): Promise<void>;
}

export function createAppendWriter(
  redis: RedisClient,
  key: string,
  options: AppendWriterOptions = {},
): AppendWriter {
  const chunkBytes = options.chunkBytes ?? 256 * 1024;
  const maxInFlight = options.maxInFlight ?? 2;
  let gathered: Buffer[] = [];
  let gatheredBytes = 0;
  let bytes = 0;
  const inFlight: Promise<unknown>[] = [];
  let failure: Error | undefined;
  let finished = false;
  let created = false;
  const ttlSeconds = options.ttlSeconds ?? 86_400;

  function flush(): void {
    if (gatheredBytes === 0) return;
    const payload =
      gathered.length === 1 && gathered[0] ? gathered[0] : Buffer.concat(gathered, gatheredBytes);
    gathered = [];
    gatheredBytes = 0;
    const append = redis.append(key, payload);
    const sent = (created ? append : Promise.all([append, redis.expire(key, ttlSeconds)])).catch(
      (err: unknown) => {
        failure ??= err instanceof Error ? err : new Error(String(err));
      },
    );
    created = true;
    inFlight.push(sent);
    void sent.finally(() => {
      const at = inFlight.indexOf(sent);
      if (at >= 0) inFlight.splice(at, 1);
    });
  }

  function check(): void {
    if (failure) throw failure;
    if (finished) throw new Error(`writer for ${key} is already finished`);
  }

  return {
    key,
    get bytes() {
      return bytes;
    },
    async write(chunk) {
      check();
      if (chunk.length === 0) return;
      gathered.push(chunk);
      gatheredBytes += chunk.length;
      bytes += chunk.length;
      if (gatheredBytes >= chunkBytes) flush();
      while (inFlight.length >= maxInFlight) await Promise.race(inFlight);
      if (failure) throw failure;
    },
    async end() {
      check();
      flush();
      finished = true;
      await Promise.all(inFlight);
      if (failure) throw failure;
    },
    async discard() {
      finished = true;
      gathered = [];
      gatheredBytes = 0;
      await Promise.all(inFlight);
      // Best effort: a key left behind by a failed DEL belongs to a message that never got 250
      // and is removed by the expiry of unfinished messages.
      await redis.del(key).catch(() => undefined);
    },
  };
}
