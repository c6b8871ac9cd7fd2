import { once } from 'node:events';
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { RedisClient } from '../queue/redis-connections.ts';

/** Stored bytes are sent in ranges of this size: memory per download stays bounded. */
const chunkBytes = 1024 * 1024;

/**
 * Streams a Redis string (a raw e-mail, an attachment's blob) as the response body, range by
 * range. Returns false, having sent nothing, when the key holds nothing.
 */
export async function sendStoredBytes(
  res: ServerResponse,
  redis: RedisClient,
  key: string,
  headers: OutgoingHttpHeaders,
): Promise<boolean> {
  const length = await redis.strlen(key);
  if (length === 0) return false;
  res.writeHead(200, { ...headers, 'content-length': String(length) });
  for (let start = 0; start < length; start += chunkBytes) {
    const chunk = await redis.getrangeBuffer(key, start, Math.min(start + chunkBytes, length) - 1);
    if (!res.write(chunk)) await once(res, 'drain');
  }
  res.end();
  return true;
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
