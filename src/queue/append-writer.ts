import { Command } from 'ioredis';
import type { RedisClient } from './redis-connections.ts';

export interface AppendWriterOptions {
  /** Most bytes one APPEND carries; default 256 KiB: large enough that a 20 MB part is ~80 round trips, small enough to keep per-session memory low. */
  chunkBytes?: number;
  /** APPENDs allowed in flight before write() waits; default 2: keeps the socket busy while bounding memory per writer to about chunkBytes × 3. */
  maxInFlight?: number;
  /** Seconds the key lives from its first write (the commit sets the final TTL); default 86400: a session that dies mid-DATA leaves nothing behind for long. */
  ttlSeconds?: number;
  /**
   * Bytes of APPENDs in flight on the connection, all writers together, past which a writer
   * that has one in flight waits for an answer; default 4 MiB. ioredis writes every command
   * to the socket at once, so without this bound twenty sessions on a slow Redis would keep
   * twenty times `chunkBytes × maxInFlight` in the socket's buffer (and two hundred, ten times
   * that); 4 MiB keeps a local Redis busy (it takes a 256 KiB APPEND in well under 1 ms).
   */
  connectionBytes?: number;
  /**
   * How the bytes are laid out in Redis: `append` (default) grows one string by APPEND;
   * `chunks` writes a hash of fields `0`, `1`, … of exactly `chunkBytes` each, the last one
   * shorter, one HSET per field (the raw copy, src/queue/raw-copy.ts).
   */
  layout?: 'append' | 'chunks';
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

/** The APPENDs on one connection, shared by its writers. */
interface ConnectionBudget {
  /** Bytes of APPENDs sent and not yet answered. */
  bytes: number;
  /** Writers waiting for an answer, woken by each one. */
  readonly waiting: Set<() => void>;
  /** Buffers of answered full-size frames, by their size, to be filled again. */
  readonly spare: Map<number, Buffer[]>;
}

/**
 * Spare frame buffers kept per connection and size: 8 x 257 KiB = about 2 MiB. Each frame
 * lives for its APPEND's round trip, long enough to reach V8's old generation, where only a
 * full collection frees it and V8 starts one when external memory has grown by about 64 MiB:
 * reused, frames leave no such garbage (twenty 10 MB messages at once peaked 15-25 MiB lower
 * with --max-semi-space-size=4, bench/README.md).
 */
const MAX_SPARE_FRAMES = 8;

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
  const chunkBytes = options.chunkBytes ?? 256 * 1024;
  const maxInFlight = options.maxInFlight ?? 2;
  const connectionBytes = options.connectionBytes ?? 4 * 1024 * 1024;
  const ttlSeconds = options.ttlSeconds ?? 86_400;
  const chunked = options.layout === 'chunks';
  const budget = budgetOf(redis);
  let frame: AppendFrame | null = null;
  let frames = 0;
  let bytes = 0;
  const inFlight = new Set<Promise<unknown>>();
  let failure: Error | undefined;
  let finished = false;
  let created = false;

  function flush(): void {
    if (frame === null || frame.payloadBytes === 0) return;
    const sentFrame = frame;
    const command = frame.command();
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
          const field = chunked ? String(frames) : null;
          frame = new AppendFrame(key, field, capacity, capacity === chunkBytes ? budget.spare : null);
          frames += 1;
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

/** The longest `$<length>\r\n` of a payload: 2^53 has 16 digits. */
const MAX_LENGTH_LINE = 1 + 16 + 2;
const CRLF = '\r\n';
/** Room for the head of a reusable frame (its key included), so frames of every key share buffers. */
const HEAD_ROOM = 1024;

/**
 * One APPEND (or, with a field, one HSET) as RESP bytes, built in a single buffer as the
 * chunks arrive: the command head (`*3`, `APPEND`, the key; or `*4`, `HSET`, the key, the
 * field) and the payload's length line are written in front of the payload
 * when it is complete, so the payload is copied once, from the chunks into the frame, and the
 * frame is what goes on the wire. (ioredis builds a command with a Buffer argument by copying
 * it into a new buffer of its own, after this module had already joined the chunks into one.)
 */
class AppendFrame {
  private readonly buffer: Buffer;
  private readonly head: Buffer;
  private readonly key: string;
  private readonly field: string | null;
  private readonly capacity: number;
  /** Where the payload starts: room for the head and the longest length line before it. */
  private readonly payloadStart: number;
  /** Whether the buffer goes back to the connection's spare buffers once answered. */
  private readonly reusable: boolean;
  payloadBytes = 0;

  /**
   * `field`: the hash field the payload goes to (HSET), or null to append it to the string.
   * `spare`: the connection's spare buffers, to take one from; null: a buffer of its own size.
   */
  constructor(
    key: string,
    field: string | null,
    capacity: number,
    spare: ReadonlyMap<number, Buffer[]> | null,
  ) {
    this.key = key;
    this.field = field;
    this.capacity = capacity;
    const bulk = (text: string) => `$${Buffer.byteLength(text)}${CRLF}${text}${CRLF}`;
    this.head = Buffer.from(
      field === null
        ? `*3${CRLF}${bulk('APPEND')}${bulk(key)}`
        : `*4${CRLF}${bulk('HSET')}${bulk(key)}${bulk(field)}`,
    );
    const headBytes = this.head.length + MAX_LENGTH_LINE;
    this.reusable = spare !== null && headBytes <= HEAD_ROOM;
    this.payloadStart = this.reusable ? HEAD_ROOM : headBytes;
    const size = this.payloadStart + capacity + CRLF.length;
    // allocUnsafeSlow: a buffer of its own, not a slice of Node's shared pool.
    this.buffer = (this.reusable ? spare?.get(size)?.pop() : undefined) ?? Buffer.allocUnsafeSlow(size);
  }

  get full(): boolean {
    return this.payloadBytes === this.capacity;
  }

  /** The APPEND was answered: keep the buffer for another frame, if it is of the kind kept. */
  release(spare: Map<number, Buffer[]>): void {
    if (!this.reusable) return;
    const kept = spare.get(this.buffer.length) ?? [];
    if (kept.length < MAX_SPARE_FRAMES) kept.push(this.buffer);
    spare.set(this.buffer.length, kept);
  }

  /** Copies as much of `chunk` from `from` as there is room for; returns how many bytes. */
  fill(chunk: Buffer, from: number): number {
    const room = this.capacity - this.payloadBytes;
    const taken = Math.min(room, chunk.length - from);
    chunk.copy(this.buffer, this.payloadStart + this.payloadBytes, from, from + taken);
    this.payloadBytes += taken;
    return taken;
  }

  /** The finished command; the frame is not filled after this. */
  command(): PreframedCommand {
    const lengthLine = `$${this.payloadBytes}${CRLF}`;
    const start = this.payloadStart - lengthLine.length - this.head.length;
    this.head.copy(this.buffer, start);
    this.buffer.write(lengthLine, this.payloadStart - lengthLine.length, 'latin1');
    const end = this.payloadStart + this.payloadBytes;
    this.buffer.write(CRLF, end, 'latin1');
    const payload = this.buffer.subarray(this.payloadStart, end);
    return new PreframedCommand(
      this.key,
      this.field,
      payload,
      this.buffer.subarray(start, end + CRLF.length),
    );
  }
}

/**
 * An APPEND or HSET whose bytes on the wire are already built. Its arguments are still the
 * key (the field) and the payload, so that a Cluster routes it by the key's slot, and a command ioredis sends
 * again (a MOVED or ASK redirection) goes out as the same bytes.
 */
class PreframedCommand extends Command {
  private readonly frame: Buffer;

  constructor(key: string, field: string | null, payload: Buffer, frame: Buffer) {
    super(field === null ? 'append' : 'hset', field === null ? [key, payload] : [key, field, payload]);
    this.frame = frame;
  }

  get frameBytes(): number {
    return this.frame.length;
  }

  override toWritable(): Buffer {
    return this.frame;
  }
}
