import type { RedisClient } from '../redis/connections.ts';
import { type AppendWriter, createAppendWriter } from './append-writer.ts';

/**
 * The raw copy of a message is a Redis hash of fixed-size chunks, fields `0`, `1`, … of
 * RAW_CHUNK_BYTES each, the last one shorter. One string grown by APPEND costs up to a
 * quarter more memory than its bytes (Redis preallocates up to 1 MB on every append and
 * jemalloc rounds a large allocation up to its size class), and is copied on each regrowth;
 * a chunk written once by HSET is allocated at its size, and this size fills its jemalloc
 * class (64 KiB) with room for the string's header. Only the last chunk is rounded up, by
 * less than a fifth of it (jemalloc spaces its classes four to a doubling): small chunks
 * keep that small for a 100 KB message too, at one field per 64 KiB. One key still holds
 * the whole message, so it expires, moves between Cluster slots and is deleted as one.
 */
export const RAW_CHUNK_BYTES = 64 * 1024 - 64;

/**
 * Chunks one HSET carries: the hash is the same, each field RAW_CHUNK_BYTES, but a message
 * goes to Redis in a quarter of the commands and writes. Every write wakes redis-server (on
 * one core with the gateway, a switch from one process to the other), and that, not the
 * commands, was most of its CPU beyond the bytes themselves: per 100 KB message (20 sessions,
 * 1,200 messages, AOF everysec) one HSET instead of three, redis-server woken 2.3 times
 * instead of 4.0 (voluntary context switches), 5.5 reads instead of 7.0 and 3.0 answers
 * instead of 5.0, its CPU 0.31 -> 0.27 ms. Two chunks per HSET gave 3.4 wakeups and 0.30 ms.
 */
export const RAW_FIELDS_PER_HSET = 4;

/**
 * Streams a message's bytes into its raw copy, RAW_FIELDS_PER_HSET chunks per HSET, with the
 * append writer's backpressure: each byte copied once, into the command that goes on the
 * wire; at most two HSETs (512 KiB) of a message and 4 MiB of the connection in flight.
 */
export function createRawCopyWriter(redis: RedisClient, key: string): AppendWriter {
  return createAppendWriter(redis, key, {
    layout: 'chunks',
    chunkBytes: RAW_CHUNK_BYTES,
    fieldsPerFrame: RAW_FIELDS_PER_HSET,
    maxInFlight: 8 / RAW_FIELDS_PER_HSET,
  });
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
