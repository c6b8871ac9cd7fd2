import type { IncomingMessage } from 'node:http';

/**
 * A small request body (JSON for /_mock and the resthook routes) as UTF-8, or undefined when
 * it is longer than `limit` bytes; the rest is still read and dropped, so the answer reaches
 * the client instead of a reset.
 */
export async function readText(req: IncomingMessage, limit: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buffer.length;
    if (size <= limit) chunks.push(buffer);
  }
  return size > limit ? undefined : Buffer.concat(chunks).toString('utf8');
}
