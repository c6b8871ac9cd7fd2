import type { RedisClient } from '../redis/connections.ts';
import { AppendFrame } from './resp-frames.ts';

export interface AppendWriterOptions {
  /** Most bytes one APPEND carries; default CHUNK_BYTES. */
  chunkBytes?: number;
  /** APPENDs allowed in flight before write() waits; default MAX_IN_FLIGHT. */
  maxInFlight?: number;
  /** Seconds the key lives from its first write (the commit sets the final TTL); default TTL_SECONDS. */
  ttlSeconds?: number;
  /**
   * Bytes of APPENDs in flight on the connection, all writers together, past which a writer
   * that has one in flight waits for an answer; default CONNECTION_BYTES.
   */
  connectionBytes?: number;
  /**
   * How the bytes are laid out in Redis: `append` (default) grows one string by APPEND;
   * `chunks` writes a hash of fields `0`, `1`, … of exactly `chunkBytes` each, the last one
   * shorter, `fieldsPerFrame` fields per HSET (the raw copy, src/store/raw-copy.ts).
   */
  layout?: 'append' | 'chunks';
  /**
   * With `chunks`: fields one HSET carries, default 1. Each field is still exactly
   * `chunkBytes` (the last one shorter), so the hash is the same whatever this is; only the
   * number of commands, and of writes to the socket, changes.
   */
  fieldsPerFrame?: number;
}

/**
 * Streams bytes into one Redis string with APPEND, with backpressure: write() resolves only
 * when fewer than `maxInFlight` APPENDs of this writer are outstanding and the connection's
 * APPENDs in flight are within `connectionBytes`. Nothing is held beyond one chunk being
 * gathered and the chunks in flight.
 *
 * Each chunk is copied once, into the APPEND command as it goes on the wire (see AppendFrame),
 * and not held after write() returns: ioredis would otherwise copy a gathered Buffer again
 * into the command it writes.
 */
export interface AppendWriter {
  readonly key: string;
  /** Bytes accepted so far. */
  readonly bytes: number;
  write(chunk: Buffer): Promise<void>;
  end(): Promise<void>;
  discard(): Promise<void>;
}

/** 256 KiB: large enough that a 20 MB part is ~80 round trips, small enough to keep per-session memory low. */
const CHUNK_BYTES = 256 * 1024;
/** 2: keeps the socket busy while bounding memory per writer to about chunkBytes × 3. */
const MAX_IN_FLIGHT = 2;
/** 86400 s (a day): a session that dies mid-DATA leaves nothing behind for long. */
const TTL_SECONDS = 86_400;
/**
 * 4 MiB. ioredis writes every command to the socket at once, so without this bound twenty
 * sessions on a slow Redis would keep twenty times `chunkBytes × maxInFlight` in the socket's
 * buffer (and two hundred, ten times that); 4 MiB keeps a local Redis busy (it takes a 256 KiB
 * APPEND in well under 1 ms).
 */
const CONNECTION_BYTES = 4 * 1024 * 1024;

/** The APPENDs on one connection, shared by its writers. */
interface ConnectionBudget {
  /** Bytes of APPENDs sent and not yet answered. */
  bytes: number;
  /** Writers waiting for an answer, woken by each one. */
  readonly waiting: Set<() => void>;
  /** Buffers of answered full-size frames, by their size, to be filled again. */
  readonly spare: Map<number, Buffer[]>;
}

const budgets = new WeakMap<RedisClient, ConnectionBudget>();

function budgetOf(redis: RedisClient): ConnectionBudget {
  let budget = budgets.get(redis);
  if (budget === undefined) {
    budget = { bytes: 0, waiting: new Set(), spare: new Map() };
    budgets.set(redis, budget);
  }
  return budget;
}

export function createAppendWriter(
  redis: RedisClient,
  key: string,
  options: AppendWriterOptions = {},
): AppendWriter {
  const chunkBytes = options.chunkBytes ?? CHUNK_BYTES;
  const maxInFlight = options.maxInFlight ?? MAX_IN_FLIGHT;
  const connectionBytes = options.connectionBytes ?? CONNECTION_BYTES;
  const ttlSeconds = options.ttlSeconds ?? TTL_SECONDS;
  const chunked = options.layout === 'chunks';
  const fieldsPerFrame = chunked ? Math.max(1, options.fieldsPerFrame ?? 1) : 1;
  const budget = budgetOf(redis);
  let frame: AppendFrame | null = null;
  /** Hash fields begun so far (chunks): the next frame's first field is named by it. */
  let fields = 0;
  let bytes = 0;
  const inFlight = new Set<Promise<unknown>>();
  let failure: Error | undefined;
  let finished = false;
  let created = false;

  function flush(): void {
    if (frame === null || frame.payloadBytes === 0) return;
    const sentFrame = frame;
    const command = frame.command();
    fields += frame.fieldCount;
    frame = null;
    const size = command.frameBytes;
    budget.bytes += size;
    redis.sendCommand(command);
    const append = command.promise;
    const sent = (created ? append : Promise.all([append, redis.expire(key, ttlSeconds)]))
      .then(
        // Answered: Redis has every byte, and ioredis will not write the frame again.
        () => sentFrame.release(budget.spare),
        (err: unknown) => {
          failure ??= err instanceof Error ? err : new Error(String(err));
        },
      )
      .finally(() => {
        inFlight.delete(sent);
        budget.bytes -= size;
        for (const wake of budget.waiting) wake();
      });
    created = true;
    inFlight.add(sent);
  }

  /** Wait while this writer, or the connection, has as much in flight as it may. */
  async function settle(): Promise<void> {
    while (
      inFlight.size >= maxInFlight ||
      (inFlight.size > 0 && budget.bytes > connectionBytes && failure === undefined)
    ) {
      const answer = Promise.withResolvers<void>();
      budget.waiting.add(answer.resolve);
      await answer.promise;
      budget.waiting.delete(answer.resolve);
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
      bytes += chunk.length;
      let from = 0;
      while (from < chunk.length) {
        if (frame === null) {
          const capacity = chunked
            ? chunkBytes
            : frameCapacity(chunkBytes, bytes - chunk.length + from, chunk.length - from);
          frame = new AppendFrame(
            key,
            chunked ? { first: fields, count: fieldsPerFrame } : null,
            capacity,
            capacity === chunkBytes ? budget.spare : null,
          );
        }
        from += frame.fill(chunk, from);
        if (frame.full) {
          flush();
          await settle();
        }
      }
      await settle();
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
      frame = null;
      await Promise.all(inFlight);
      // Best effort: a key left behind by a failed DEL belongs to a message that never got 250
      // and is removed by the expiry of unfinished messages.
      await redis.del(key).catch(() => undefined);
    },
  };
}

/** The smallest APPEND frame, bytes: a message of a few KiB is not given 256 KiB to fill. */
const MIN_FRAME_BYTES = 16 * 1024;

/**
 * How much the next frame holds: as much as was written before it (so frames double, 16,
 * 16, 32, 64, ... KiB, and a small part gets a small APPEND), or the next chunk when that is
 * larger; at most `chunkBytes`, a larger chunk filling this frame and the next.
 */
function frameCapacity(chunkBytes: number, written: number, next: number): number {
  const doubling = Math.min(chunkBytes, Math.max(MIN_FRAME_BYTES, written));
  return Math.max(doubling, Math.min(next, chunkBytes));
}
