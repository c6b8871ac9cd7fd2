import { Readable } from 'node:stream';
import { type MessageView, readMessageView } from '../../mail/message-view.ts';
import type { KeySpace } from '../../record/keys.ts';
import type { RedisClient } from '../../redis/connections.ts';
import { rawCopyLength, readRawRange } from '../../store/raw-copy.ts';

/** Bytes of the raw source the message page shows inline; the whole message downloads as .eml. */
export const RAW_SHOWN_BYTES = 256 * 1024;
/** Bytes read from Redis at once while the view is parsed. */
const RANGE_BYTES = 1024 * 1024;

export interface MessageSource {
  /** The headers and bodies; null when the raw copy is no longer stored. */
  view: MessageView | null;
  /** The start of the raw source as text (UTF-8; a byte that is not becomes U+FFFD). */
  raw: string | null;
  /** The raw copy's length in bytes. */
  size: number;
}

/** The raw copy of a message, read for the console's message page. */
export async function readMessageSource(
  redis: RedisClient,
  keys: KeySpace,
  messageId: string,
): Promise<MessageSource> {
  const key = keys.message(messageId).raw;
  const size = await rawCopyLength(redis, key);
  if (size === 0) return { view: null, raw: null, size };
  async function* ranges() {
    for (let start = 0; start < size; start += RANGE_BYTES) {
      yield await readRawRange(redis, key, start, Math.min(size, start + RANGE_BYTES));
    }
  }
  const [view, head] = await Promise.all([
    readMessageView(Readable.from(ranges())),
    readRawRange(redis, key, 0, Math.min(size, RAW_SHOWN_BYTES)),
  ]);
  return { view, raw: head.toString('utf8'), size };
}
