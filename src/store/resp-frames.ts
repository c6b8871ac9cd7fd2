import { Command } from 'ioredis';

/**
 * The RESP bytes of the append writer's commands, built where the payload is copied in: an
 * APPEND or HSET frame is one buffer that goes on the wire as it is, through a Command whose
 * framing (ioredis's toWritable) is replaced by that buffer. ioredis is pinned exactly for
 * this override; test/integration/append-writer.test.ts reads what Redis stored.
 */

/**
 * Spare frame buffers kept per connection and size: 8 x 257 KiB = about 2 MiB. Each frame
 * lives for its APPEND's round trip, long enough to reach V8's old generation, where only a
 * full collection frees it and V8 starts one when external memory has grown by about 64 MiB:
 * reused, frames leave no such garbage (twenty 10 MB messages at once peaked 15-25 MiB lower
 * with --max-semi-space-size=4, bench/README.md).
 */
const MAX_SPARE_FRAMES = 8;

/** The longest `$<length>\r\n` of a payload: 2^53 has 16 digits. */
const MAX_LENGTH_LINE = 1 + 16 + 2;
const CRLF = '\r\n';
/** Room for the head of a reusable frame (its key included), so frames of every key share buffers. */
const HEAD_ROOM = 1024;
/**
 * Room between two fields of one HSET: the CRLF ending a value, the next field's name (at most
 * 16 digits) as a bulk string and its value's length line: at most 2 + 23 + 19 bytes.
 */
const SEPARATOR_ROOM = 64;

/** The bulk string of `text`: `$<bytes>\r\n<text>\r\n`. */
function bulk(text: string): string {
  return `$${Buffer.byteLength(text)}${CRLF}${text}${CRLF}`;
}

/** The hash fields a frame may fill (HSET): named `first`, `first + 1`, … */
export interface FrameFields {
  readonly first: number;
  readonly count: number;
}

/**
 * One APPEND (or, with fields, one HSET of one or more fields) as RESP bytes, built in a single
 * buffer as the chunks arrive: the command head (`*3`, `APPEND`, the key; or `*<2 + 2n>`,
 * `HSET`, the key, the first field) and the first payload's length line are written in front
 * of it when the frame is complete, so the payload is copied once, from the chunks into the
 * frame, and the frame is what goes on the wire. (ioredis builds a command with a Buffer
 * argument by copying it into a new buffer of its own, after this module had already joined
 * the chunks into one.)
 *
 * The fields of an HSET are each `capacity` bytes but the last: every field but the last is
 * full, so the bytes between two values (the CRLF, the next field's name, its length line) are
 * written when the next field begins, with the full length; should the last field end shorter
 * with a shorter length line (under 10,000 bytes for 65,472-byte fields), its bytes are moved
 * back by the difference, a few bytes, when the frame is complete.
 */
export class AppendFrame {
  private readonly buffer: Buffer;
  private readonly key: string;
  private readonly fields: FrameFields | null;
  /** Bytes of each payload (APPEND) or of each field's value (HSET). */
  private readonly capacity: number;
  /** Where each begun payload starts in the buffer. */
  private readonly starts: number[];
  /** Bytes in the payload being filled (the last begun). */
  private filled = 0;
  /** Whether the buffer goes back to the connection's spare buffers once answered. */
  private readonly reusable: boolean;
  payloadBytes = 0;

  /**
   * `fields`: the hash fields the payload goes to (HSET), or null to append it to the string.
   * `spare`: the connection's spare buffers, to take one from; null: a buffer of its own size.
   */
  constructor(
    key: string,
    fields: FrameFields | null,
    capacity: number,
    spare: ReadonlyMap<number, Buffer[]> | null,
  ) {
    this.key = key;
    this.fields = fields;
    this.capacity = capacity;
    const count = fields?.count ?? 1;
    const longestHead = Buffer.byteLength(this.head(count, fields?.first ?? 0)) + MAX_LENGTH_LINE;
    this.reusable = spare !== null && longestHead <= HEAD_ROOM;
    const payloadStart = this.reusable ? HEAD_ROOM : longestHead;
    this.starts = [payloadStart];
    const size = payloadStart + count * capacity + (count - 1) * SEPARATOR_ROOM + CRLF.length;
    // allocUnsafeSlow: a buffer of its own, not a slice of Node's shared pool.
    this.buffer = (this.reusable ? spare?.get(size)?.pop() : undefined) ?? Buffer.allocUnsafeSlow(size);
  }

  /** Hash fields begun (1 for an APPEND). */
  get fieldCount(): number {
    return this.starts.length;
  }

  get full(): boolean {
    return this.filled === this.capacity && this.starts.length === (this.fields?.count ?? 1);
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
    let taken = 0;
    while (from + taken < chunk.length) {
      if (this.filled === this.capacity) {
        if (this.full) break;
        this.beginField();
      }
      const start = this.starts.at(-1) ?? 0;
      const step = Math.min(this.capacity - this.filled, chunk.length - from - taken);
      chunk.copy(this.buffer, start + this.filled, from + taken, from + taken + step);
      this.filled += step;
      taken += step;
    }
    this.payloadBytes += taken;
    return taken;
  }

  /** The field after a full one: what lies between the two values, then room for its bytes. */
  private beginField(): void {
    const previous = this.starts.at(-1) ?? 0;
    const separator = this.separator(this.starts.length, this.capacity);
    const at = previous + this.capacity;
    this.buffer.write(separator, at, 'latin1');
    this.starts.push(at + separator.length);
    this.filled = 0;
  }

  /** The bytes between the value before field `index` of this frame and its value of `length` bytes. */
  private separator(index: number, length: number): string {
    return `${CRLF}${bulk(String((this.fields?.first ?? 0) + index))}$${length}${CRLF}`;
  }

  /** The command's head up to its first payload's length line, for `count` fields. */
  private head(count: number, first: number): string {
    return this.fields === null
      ? `*3${CRLF}${bulk('APPEND')}${bulk(this.key)}`
      : `*${2 + 2 * count}${CRLF}${bulk('HSET')}${bulk(this.key)}${bulk(String(first))}`;
  }

  /** The finished command; the frame is not filled after this. */
  command(): PreframedCommand {
    const count = this.starts.length;
    let lastStart = this.starts[count - 1] ?? 0;
    if (count > 1 && this.filled < this.capacity) {
      // The last field is shorter than the separator before it said: say its length, and
      // move its bytes back by what the length line lost.
      const written = this.separator(count - 1, this.capacity).length;
      const actual = this.separator(count - 1, this.filled);
      const shift = written - actual.length;
      if (shift > 0) this.buffer.copyWithin(lastStart - shift, lastStart, lastStart + this.filled);
      lastStart -= shift;
      this.buffer.write(actual, lastStart - actual.length, 'latin1');
      this.starts[count - 1] = lastStart;
    }
    const firstStart = this.starts[0] ?? 0;
    const firstLength = count > 1 ? this.capacity : this.filled;
    const head = `${this.head(count, this.fields?.first ?? 0)}$${firstLength}${CRLF}`;
    const start = firstStart - Buffer.byteLength(head);
    this.buffer.write(head, start, 'utf8');
    const end = lastStart + this.filled;
    this.buffer.write(CRLF, end, 'latin1');
    const args: (string | Buffer)[] = [this.key];
    this.starts.forEach((payloadStart, index) => {
      const length = index === count - 1 ? this.filled : this.capacity;
      if (this.fields !== null) args.push(String(this.fields.first + index));
      args.push(this.buffer.subarray(payloadStart, payloadStart + length));
    });
    return new PreframedCommand(
      this.fields === null ? 'append' : 'hset',
      args,
      this.buffer.subarray(start, end + CRLF.length),
    );
  }
}

/**
 * An APPEND or HSET whose bytes on the wire are already built. Its arguments are still the
 * key (the fields) and the payloads, so that a Cluster routes it by the key's slot, and a
 * command ioredis sends again (a MOVED or ASK redirection) goes out as the same bytes.
 */
export class PreframedCommand extends Command {
  private readonly frame: Buffer;

  constructor(name: 'append' | 'hset', args: (string | Buffer)[], frame: Buffer) {
    super(name, args);
    this.frame = frame;
  }

  get frameBytes(): number {
    return this.frame.length;
  }

  override toWritable(): Buffer {
    return this.frame;
  }
}
