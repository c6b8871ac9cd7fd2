import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { RedisClient } from '../redis/connections.ts';
import { rawCopyLength, readRawRange } from '../store/raw-copy.ts';

/** Stored bytes are sent in ranges of this size: memory per download stays bounded. */
const chunkBytes = 1024 * 1024;

/**
 * Streams a Redis string (a raw e-mail, an attachment's blob) as the response body, range by
 * range, reading the next range only when the client takes the last (pipeline's backpressure).
 * A client that goes away mid-download ends it: no further range is read, and nothing waits
 * on a 'drain' that never comes. Returns false, having sent nothing, when the key holds nothing.
 */
export async function sendStoredBytes(
  res: ServerResponse,
  redis: RedisClient,
  key: string,
  headers: OutgoingHttpHeaders,
): Promise<boolean> {
  return sendRanges(res, await redis.strlen(key), headers, (start, end) =>
    redis.getrangeBuffer(key, start, end - 1),
  );
}

/** The same for the raw copy of a message, a hash of chunks (src/store/raw-copy.ts). */
export async function sendRawCopy(
  res: ServerResponse,
  redis: RedisClient,
  key: string,
  headers: OutgoingHttpHeaders,
): Promise<boolean> {
  return sendRanges(res, await rawCopyLength(redis, key), headers, (start, end) =>
    readRawRange(redis, key, start, end),
  );
}

async function sendRanges(
  res: ServerResponse,
  length: number,
  headers: OutgoingHttpHeaders,
  read: (start: number, end: number) => Promise<Buffer>,
): Promise<boolean> {
  if (length === 0) return false;
  res.writeHead(200, { ...headers, 'content-length': String(length) });
  async function* ranges() {
    for (let start = 0; start < length; start += chunkBytes) {
      yield await read(start, Math.min(start + chunkBytes, length));
    }
  }
  try {
    await pipeline(Readable.from(ranges(), { objectMode: false }), res);
  } catch (err) {
    // The client left (the response closed before it ended): nobody to answer. A read that
    // failed still throws, to be logged.
    if (!isPrematureClose(err)) throw err;
  }
  return true;
}

function isPrematureClose(err: unknown): boolean {
  return err instanceof Error && 'code' in err && err.code === 'ERR_STREAM_PREMATURE_CLOSE';
}

/**
 * A Content-Disposition that makes browsers save the file, never show it, under a name that
 * cannot break the header: a plain-ASCII fallback (quotes, backslashes, control and non-ASCII
 * characters replaced) and the exact name in RFC 8187 encoding for those that read it.
 */
export function downloadDisposition(fileName: string): string {
  const fallback = fileName.replace(/[^\x20-\x7e]|["\\]/g, '_').slice(0, 200) || 'attachment';
  const exact = encodeURIComponent(fileName).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16)}`);
  return `attachment; filename="${fallback}"; filename*=UTF-8''${exact}`;
}
