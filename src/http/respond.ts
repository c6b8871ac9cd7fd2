import type { ServerResponse } from 'node:http';

/** A JSON answer, pretty-printed: people read these with curl as often as programs do. */
export function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body, null, 2);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** The error body of every refusal: `{ error, problems? }`. */
export function refuse(res: ServerResponse, status: number, error: string, problems?: string[]): void {
  json(res, status, problems === undefined ? { error } : { error, problems });
}
