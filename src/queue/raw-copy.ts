import type { AppendWriter } from './append-writer.ts';
import type { RedisClient } from './redis-connections.ts';

/**
 * The raw copy of a message is a Redis hash of fixed-size chunks, fields `0`, `1`, … of
 * RAW_CHUNK_BYTES each, the last one shorter. One string grown by APPEND costs up to a
 * quarter more memory than its bytes (Redis preallocates up to 1 MB on every append and
 * jemalloc rounds a large allocation up to its size class), and is copied on each regrowth;
 * a chunk written once by HSET is allocated at its size, and this size fills its jemalloc
 * class (64 KiB) with room for the string's header. Only the last chunk is rounded up, by
 * less than a fifth of it (jemalloc spaces its classes four to a doubling): small chunks
 * keep that small for a 100 KB message too, at one HSET per 64 KiB. One key still holds
 * the whole message, so it expires, moves between Cluster slots and is deleted as one.
 */
export const RAW_CHUNK_BYTES = 64 * 1024 - 64;

export interface RawCopyWriterOptions {
  /** HSETs allowed in flight before write() waits; default 8: the socket stays busy, memory per message stays under 600 KiB. */
  maxInFlight?: number;
  /** Seconds the key lives from its first write (the commit sets the final TTL); default 86400. */
  ttlSeconds?: number;
}

/** Streams a message's bytes into its raw copy, a chunk per HSET, with backpressure. */
export function createRawCopyWriter(
  redis: RedisClient,
  key: string,
  options: RawCopyWriterOptions = {},
): AppendWriter {
  const maxInFlight = options.maxInFlight ?? 8;
  const ttlSeconds = options.ttlSeconds ?? 86_400;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let bytes = 0;
  let chunks = 0;
  const inFlight = new Set<Promise<void>>();
  let failure: Error | undefined;
  let finished = false;

  function send(chunk: Buffer): void {
    const field = String(chunks);
    const sent = (
      chunks === 0
        ? Promise.all([redis.hset(key, field, chunk), redis.expire(key, ttlSeconds)])
        : redis.hset(key, field, chunk)
    ).then(
      () => undefined,
      (err: unknown) => {
        failure ??= err instanceof Error ? err : new Error(String(err));
      },
    );
    chunks += 1;
    inFlight.add(sent);
    void sent.finally(() => inFlight.delete(sent));
  }

  /** Send every whole chunk gathered; with `all`, the short rest too. */
  function flush(all: boolean): void {
    while (pendingBytes >= RAW_CHUNK_BYTES || (all && pendingBytes > 0)) {
      const gathered = pending.length === 1 && pending[0] ? pending[0] : Buffer.concat(pending, pendingBytes);
      const size = Math.min(RAW_CHUNK_BYTES, gathered.length);
      send(gathered.subarray(0, size));
      const rest = gathered.subarray(size);
      pending = rest.length > 0 ? [rest] : [];
      pendingBytes = rest.length;
    }
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
      pending.push(chunk);
      pendingBytes += chunk.length;
      bytes += chunk.length;
      flush(false);
      while (inFlight.size >= maxInFlight) await Promise.race(inFlight);
      if (failure) throw failure;
    },
    async end() {
      check();
      flush(true);
      finished = true;
      await Promise.all(inFlight);
      if (failure) throw failure;
    },
    async discard() {
      finished = true;
      pending = [];
      pendingBytes = 0;
      await Promise.all(inFlight);
      // Best effort: a key left behind expires with the TTL set at its first write.
      await redis.del(key).catch(() => undefined);
    },
  };
}

/** The length of a raw copy in bytes; 0 when it is not stored. */
export async function rawCopyLength(redis: RedisClient, key: string): Promise<number> {
  const chunks = await redis.hlen(key);
  if (chunks === 0) return 0;
  return (chunks - 1) * RAW_CHUNK_BYTES + (await redis.hstrlen(key, String(chunks - 1)));
}

/**
 * Bytes `start` to `end` (exclusive) of a raw copy. Throws when the copy does not hold
 * them all (it expired, or the range runs past its end).
 */
export async function readRawRange(
  redis: RedisClient,
  key: string,
  start: number,
  end: number,
): Promise<Buffer> {
  if (end <= start) return Buffer.alloc(0);
  const first = Math.floor(start / RAW_CHUNK_BYTES);
  const last = Math.floor((end - 1) / RAW_CHUNK_BYTES);
  const fields = Array.from({ length: last - first + 1 }, (_, at) => String(first + at));
  const chunks = await redis.hmgetBuffer(key, ...fields);
  const present = chunks.filter((chunk): chunk is Buffer => chunk !== null);
  const joined = present.length === 1 && present[0] ? present[0] : Buffer.concat(present);
  const from = start - first * RAW_CHUNK_BYTES;
  if (present.length !== chunks.length || joined.length < from + (end - start))
    throw new Error(`the raw copy ${key} does not hold bytes ${start}-${end}`);
  return joined.subarray(from, from + (end - start));
}
