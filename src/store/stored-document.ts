import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { transferDecoder } from '../mail/decoders/transfer-decoder.ts';
import type { PartSpan } from '../mail/part-store.ts';
import type { KeySpace } from '../record/keys.ts';
import type { RedisClient } from '../redis/connections.ts';
import { RAW_CHUNK_BYTES, readRawRange } from './raw-copy.ts';

/** One stored document of a message: its bytes are named by their SHA-256. */
export interface DocumentRef {
  readonly messageId: string;
  readonly sha256: string;
}

/** The raw copy is read a few chunks at a time: what one read holds stays bounded. */
const rangeBytes = 4 * RAW_CHUNK_BYTES;

/**
 * The bytes of a stored document, or null when they are no longer stored (every upload of
 * them succeeded, or the message expired). A document is stored once: as its span of the raw
 * copy (PartSpan, decoded here with the decoder the MIME walk used, and checked against its
 * SHA-256), or, when it is no span of it (a file taken out of a container, a body taken as a
 * document), as a blob of its own.
 */
export async function readStoredDocument(
  redis: RedisClient,
  keys: KeySpace,
  ref: DocumentRef,
): Promise<Buffer | null> {
  const messageKeys = keys.message(ref.messageId);
  const [blob, span] = await Promise.all([
    redis.getBuffer(messageKeys.blob(ref.sha256)),
    redis.get(messageKeys.span(ref.sha256)),
  ]);
  if (blob !== null) return blob;
  if (span === null) return null;
  return decodeSpan(redis, messageKeys.raw, parseSpan(span, ref), ref);
}

/** Whether a document's bytes are still stored, as a span of the raw copy or as a blob. */
export async function isDocumentStored(
  redis: RedisClient,
  keys: KeySpace,
  ref: DocumentRef,
): Promise<boolean> {
  const messageKeys = keys.message(ref.messageId);
  return (await redis.exists(messageKeys.blob(ref.sha256), messageKeys.span(ref.sha256))) > 0;
}

async function decodeSpan(
  redis: RedisClient,
  rawKey: string,
  span: PartSpan,
  ref: DocumentRef,
): Promise<Buffer> {
  const decoder = transferDecoder(span.encoding);
  const decoded: Buffer[] = [];
  decoder.on('data', (chunk: Buffer) => decoded.push(chunk));
  const ended = finished(decoder);
  try {
    for (let start = span.start; start < span.end; start += rangeBytes) {
      const range = await readRawRange(redis, rawKey, start, Math.min(start + rangeBytes, span.end));
      if (!decoder.write(range)) await once(decoder, 'drain');
    }
    decoder.end();
    await ended;
  } catch (err) {
    decoder.destroy();
    await ended.catch(() => undefined);
    throw err;
  }
  const bytes = Buffer.concat(decoded);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  if (sha256 !== ref.sha256)
    throw new Error(
      `document ${ref.sha256} of ${ref.messageId} decodes from the raw copy to other bytes (${sha256})`,
    );
  return bytes;
}

function parseSpan(text: string, ref: DocumentRef): PartSpan {
  const value: unknown = JSON.parse(text);
  if (
    typeof value === 'object' &&
    value !== null &&
    'start' in value &&
    'end' in value &&
    'encoding' in value &&
    Number.isSafeInteger(value.start) &&
    Number.isSafeInteger(value.end) &&
    typeof value.encoding === 'string'
  )
    return { start: Number(value.start), end: Number(value.end), encoding: value.encoding };
  throw new Error(
    `the span of document ${ref.sha256} of ${ref.messageId} is unreadable: ${text.slice(0, 100)}`,
  );
}
