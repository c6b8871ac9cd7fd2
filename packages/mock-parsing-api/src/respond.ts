import type { ServerResponse } from 'node:http';
import { toSnakeCase } from './to-snake-case.ts';

export interface RespondOptions {
  /** The request's `snake_case=true`: convert the body's keys. */
  snakeCase?: boolean;
  headers?: Readonly<Record<string, string>>;
}

/**
 * The one way the mock answers. A string body is sent as it is, so a fault can imitate a
 * proxy's HTML page; anything else as JSON. An answer given before the request body was read
 * (a 401, a fault) needs no draining here: node:http discards the unread rest of the request
 * once the response has ended, so the client still gets the status, not a broken pipe.
 */
export function respond(
  res: ServerResponse,
  status: number,
  body: unknown,
  options: RespondOptions = {},
): void {
  if (res.headersSent || res.destroyed) return;
  const isText = typeof body === 'string';
  const payload = isText ? body : JSON.stringify(options.snakeCase ? toSnakeCase(body) : body);
  res.writeHead(status, {
    'content-type': isText ? 'text/plain; charset=utf-8' : 'application/json',
    'content-length': String(Buffer.byteLength(payload)),
    ...options.headers,
  });
  res.end(payload);
}
