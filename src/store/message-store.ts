import type { PartReader, PartSpan, PartStore, PartWriter } from '../mail/part-store.ts';
import type { KeySpace } from '../record/keys.ts';
import type { RedisClient } from '../redis/connections.ts';
import { type AppendWriter, createAppendWriter } from './append-writer.ts';
import { createRawCopyWriter } from './raw-copy.ts';

/**
 * Where one incoming message's bytes go while DATA streams in: the raw copy, appended to its
 * key under the message's hash tag, and for each document part its span of the raw copy
 * (kept here until the commit). Only parts that are not spans of the raw copy are written
 * decoded, each to a key of its own: containers to be opened after DATA and what they hold,
 * a body taken as a document. Nothing here is visible to workers until the producer commits
 * the message.
 */
export interface IncomingMessage {
  readonly messageId: string;
  readonly raw: AppendWriter;
  readonly parts: PartStore;
  /** Reads a stored part back whole (a container, at most smtp.maxPartSize), once it is ended. */
  readonly storedParts: PartReader;
  /** Every key written so far, for the commit and for cleanup. */
  partKeys(): ReadonlyMap<number, string>;
  /** The document parts that are spans of the raw copy, written nowhere else. */
  partSpans(): ReadonlyMap<number, PartSpan>;
  /**
   * The commit transaction stored this message: from now on its raw copy and blobs are the
   * record's, and discard() leaves them alone. Called by the producer right after the commit.
   */
  markCommitted(): void;
  /**
   * Forget everything written for this message (it was refused, or failed before its commit).
   * Once committed, nothing: a failure after the commit (a later step of the enqueue) answers
   * 451, the sender's retry finds the delivery and finishes it, and its record must still
   * serve the raw copy.
   */
  discard(): Promise<void>;
}

export function openIncomingMessage(redis: RedisClient, keys: KeySpace, messageId: string): IncomingMessage {
  const messageKeys = keys.message(messageId);
  const raw = createRawCopyWriter(redis, messageKeys.raw);
  const writers = new Map<number, AppendWriter>();
  const spans = new Map<number, PartSpan>();
  let committed = false;

  const parts: PartStore = {
    openPart(index: number): PartWriter {
      const writer = createAppendWriter(redis, messageKeys.part(index));
      writers.set(index, writer);
      return writer;
    },
    recordSpan(index, span) {
      spans.set(index, span);
    },
  };

  const storedParts: PartReader = {
    async readPart(index) {
      const writer = writers.get(index);
      const bytes = writer === undefined ? null : await redis.getBuffer(writer.key);
      if (bytes === null) throw new Error(`part ${index} of ${messageId} was not stored`);
      return bytes;
    },
  };

  return {
    messageId,
    raw,
    parts,
    storedParts,
    partKeys() {
      return new Map([...writers].map(([index, writer]) => [index, writer.key]));
    },
    partSpans() {
      return spans;
    },
    markCommitted() {
      committed = true;
    },
    async discard() {
      if (committed) return;
      await Promise.allSettled([raw.discard(), ...[...writers.values()].map((writer) => writer.discard())]);
    },
  };
}
