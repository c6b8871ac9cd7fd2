import type { PartReader, PartStore, PartWriter } from '../mail/part-store.ts';
import type { KeySpace } from '../record/keys.ts';
import { type AppendWriter, createAppendWriter } from './append-writer.ts';
import type { RedisClient } from './redis-connections.ts';

/**
 * Where one incoming message's bytes go while DATA streams in: the raw copy and the decoded
 * leaves, each appended to its own key under the message's hash tag. Nothing here is visible
 * to workers until the producer commits the message.
 */
export interface IncomingMessage {
  readonly messageId: string;
  readonly raw: AppendWriter;
  readonly parts: PartStore;
  /** Reads a stored part back whole (a container, at most smtp.maxPartSize), once it is ended. */
  readonly storedParts: PartReader;
  /** Every key written so far, for the commit and for cleanup. */
  partKeys(): ReadonlyMap<number, string>;
  /** Forget everything written for this message (it was refused or failed). */
  discard(): Promise<void>;
}

export function openIncomingMessage(redis: RedisClient, keys: KeySpace, messageId: string): IncomingMessage {
  const messageKeys = keys.message(messageId);
  const raw = createAppendWriter(redis, messageKeys.raw);
  const writers = new Map<number, AppendWriter>();

  const parts: PartStore = {
    openPart(index: number): PartWriter {
      const writer = createAppendWriter(redis, messageKeys.part(index));
      writers.set(index, writer);
      return writer;
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
    async discard() {
      await Promise.allSettled([raw.discard(), ...[...writers.values()].map((writer) => writer.discard())]);
    },
  };
}
