import { createHash, type Hash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { PartSpan, PartStore, PartWriter } from '../src/mail/part-store.ts';

/** What the store saw of one part. */
export interface MemoryPart {
  index: number;
  state: 'open' | 'ended' | 'discarded';
  size: number;
  /** Hex SHA-256 of the bytes written; set when the part ends. */
  sha256: string;
  /** The bytes written, when the store keeps them; null otherwise. */
  bytes: Buffer | null;
  writes: number;
}

export interface MemoryStore extends PartStore {
  readonly parts: Map<number, MemoryPart>;
  /** The document parts a walk over the raw copy recorded as spans of it (WalkOptions.spansOfRaw). */
  readonly spans: Map<number, PartSpan>;
  /** Emits `write` (index, chunk) for every write, before the write resolves. */
  readonly events: EventEmitter;
  /** From now on, writes stay pending until releaseWrites(). */
  holdWrites(): void;
  releaseWrites(): void;
}

export interface MemoryStoreOptions {
  /** Keep the bytes of each part (default true); false keeps only size and hash, for big parts. */
  keepBytes?: boolean;
}

/** An in-memory PartStore for tests, which can hold writes back to exercise backpressure. */
export function createMemoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  const keepBytes = options.keepBytes ?? true;
  const parts = new Map<number, MemoryPart>();
  const spans = new Map<number, PartSpan>();
  const events = new EventEmitter();
  let gate: PromiseWithResolvers<void> | null = null;

  return {
    parts,
    spans,
    events,
    recordSpan(index, span) {
      if (spans.has(index)) throw new Error(`span of part ${index} recorded twice`);
      spans.set(index, span);
    },
    holdWrites() {
      gate ??= Promise.withResolvers<void>();
    },
    releaseWrites() {
      gate?.resolve();
      gate = null;
    },
    openPart(index: number): PartWriter {
      if (parts.has(index)) throw new Error(`part ${index} opened twice`);
      const part: MemoryPart = { index, state: 'open', size: 0, sha256: '', bytes: null, writes: 0 };
      parts.set(index, part);
      const hash: Hash = createHash('sha256');
      const chunks: Buffer[] = [];
      const expectOpen = (action: string) => {
        if (part.state !== 'open') throw new Error(`${action} on part ${index}, which is ${part.state}`);
      };
      return {
        async write(chunk) {
          expectOpen('write');
          part.size += chunk.length;
          part.writes += 1;
          hash.update(chunk);
          if (keepBytes) chunks.push(Buffer.from(chunk));
          events.emit('write', index, chunk);
          if (gate !== null) await gate.promise;
        },
        async end() {
          expectOpen('end');
          part.state = 'ended';
          part.sha256 = hash.digest('hex');
          part.bytes = keepBytes ? Buffer.concat(chunks) : null;
        },
        async discard() {
          part.state = 'discarded';
          chunks.length = 0;
          part.bytes = null;
        },
      };
    },
  };
}
