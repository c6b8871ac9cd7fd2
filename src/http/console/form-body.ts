import type { IncomingMessage } from 'node:http';

/** The most a console form sends (bytes): a token, a job id, a CSRF token. */
const maxFormBytes = 8 * 1024;

/** A urlencoded form body; null when it is too large or not a form. */
export async function readForm(req: IncomingMessage): Promise<URLSearchParams | null> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') return null;
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of req) {
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    length += bytes.length;
    if (length > maxFormBytes) return null;
    chunks.push(bytes);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}
