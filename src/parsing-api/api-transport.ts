import { lookup as dnsLookup } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { FormData, Pool } from 'undici';
import type { Logger } from '../logger.ts';
import type { ApiResult } from './api-result.ts';
import { isLocalhostName, parseBaseUrl } from './base-url-policy.ts';

/**
 * The one HTTP transport to the parsing API, under the document calls (parsing-api-client.ts)
 * and the workspace calls (workspace-client.ts): one undici pool to the base URL's origin,
 * the bearer key on every request, the base-URL policy (base-url-policy.ts) at creation, one
 * overall deadline per request, a bounded response body, and every outcome reported as an
 * ApiResult. It never throws for HTTP or network failures; only a bad argument throws.
 */

export interface ApiTransportOptions {
  /** `https://api.eu1.example.com`; plain `http:` only to a loopback host. A path prefix is kept. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>`; never logged, never in an error message. */
  apiKey: string;
  /**
   * Longest one request may take, in milliseconds, from sending to the last response byte.
   * With `wait=true` the service answers only after parsing, so this must cover parsing.
   */
  timeoutMs: number;
  /** One debug line per request; the workspace commands, which answer a person, pass none. */
  logger?: Logger;
  /** Send to an http: base URL that is not loopback (api.allowInsecureHttp); default false. */
  allowInsecureHttp?: boolean;
  /** Parallel connections to the service; default DEFAULT_CONNECTIONS. */
  connections?: number;
  /** Most response-body bytes read; default 1 MiB. A larger body is reported, not read. */
  maxResponseBytes?: number;
}

export interface ApiRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Below the base URL, its segments already escaped: `/v3/documents`. */
  path: string;
  /** Query parameters, in this order, before `snake_case`. */
  query?: Readonly<Record<string, string>>;
  /** Ask for the answer in snake_case (`?snake_case=true`, docs/parsing-api.md); default false. */
  snakeCase?: boolean;
  /** A multipart form, or a value sent as `application/json`. */
  body?: FormData | { json: unknown };
  /** Headers besides the key, accept and content type (e.g. a resthook's X-Hook-Secret). */
  headers?: Readonly<Record<string, string>>;
}

export interface ApiTransport {
  /** Origin and path prefix, for messages that say where a request went (never credentials). */
  readonly baseUrl: string;
  request(request: ApiRequest): Promise<ApiResult>;
  /** Idempotent; waits for requests in flight. */
  close(): Promise<void>;
  /** Ends the requests still in flight at once, then closes. */
  destroy(): Promise<void>;
}

/** 1 MiB: a Document without `data` or a Workspace is a few KiB; error pages are smaller still. */
const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;

/**
 * Connections of a client built without a count (a test, a script; the uploader passes
 * upload.concurrency, the workspace commands 2): 8 requests in flight, then undici queues.
 */
const DEFAULT_CONNECTIONS = 8;

/** undici's own timeout codes, all reported as `TIMEOUT` so the classifier has one name. */
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

/**
 * Names under `localhost` are resolved as `localhost` itself, never by DNS (RFC 6761 §6.3),
 * which is what lets base-url-policy.ts count `app.localhost` as loopback.
 */
export const localhostLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(isLocalhostName(hostname) ? 'localhost' : hostname, options, callback);
};

export function createApiTransport(options: ApiTransportOptions): ApiTransport {
  const base = parseBaseUrl(options.baseUrl, options.allowInsecureHttp);
  if (!/^[\x21-\x7e]+$/.test(options.apiKey)) {
    // The value is not echoed: it is the secret.
    throw new Error('apiKey is empty or has characters not allowed in an HTTP header');
  }
  if (!Number.isInteger(options.timeoutMs) || options.timeoutMs <= 0) {
    throw new Error(`timeoutMs must be a positive integer, got ${options.timeoutMs}`);
  }
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const logger = options.logger?.child({ component: 'parsing-api-client', origin: base.origin });
  const authorization = `Bearer ${options.apiKey}`;
  const pool = new Pool(base.origin, {
    connections: options.connections ?? DEFAULT_CONNECTIONS,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    connect: { lookup: localhostLookup },
  });
  let closing: Promise<void> | undefined;

  return {
    baseUrl: `${base.origin}${base.pathPrefix}`,
    async request({ method, path: below, query, snakeCase, body, headers: extra }) {
      const search = new URLSearchParams(query);
      if (snakeCase === true) search.set('snake_case', 'true');
      const path = `${base.pathPrefix}${below}${search.size > 0 ? `?${search}` : ''}`;
      const json = body === undefined || body instanceof FormData ? undefined : JSON.stringify(body.json);
      const started = performance.now();
      try {
        const response = await pool.request({
          path,
          method,
          headers: {
            ...extra,
            authorization,
            accept: 'application/json',
            ...(json === undefined ? {} : { 'content-type': 'application/json' }),
          },
          body: json ?? (body instanceof FormData ? body : null),
          // The overall deadline; undici's headers/body timeouts only bound the gaps.
          signal: AbortSignal.timeout(options.timeoutMs),
        });
        const headers = flattenHeaders(response.headers);
        const read = await readBoundedBody(response.body, maxResponseBytes);
        logger?.debug(
          { method, path, status: response.statusCode, ms: elapsed(started) },
          'parsing API answered',
        );
        return { kind: 'response', status: response.statusCode, headers, ...decode(read, headers) };
      } catch (caught) {
        const error = describeNetworkError(caught, options.timeoutMs);
        logger?.debug({ method, path, code: error.code, ms: elapsed(started) }, 'parsing API unreachable');
        return { kind: 'network', error };
      }
    },
    close() {
      closing ??= pool.close();
      return closing;
    },
    destroy() {
      closing ??= pool.destroy();
      return closing;
    },
  };
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    flat[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

type ReadBody = { bytes: Buffer; overflow: false } | { overflow: true; limit: number };

/** Reads at most `limit` bytes; past that the stream is destroyed rather than drained. */
async function readBoundedBody(
  body: AsyncIterable<Buffer> & { destroy(): void },
  limit: number,
): Promise<ReadBody> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > limit) {
      body.destroy();
      return { overflow: true, limit };
    }
    chunks.push(chunk);
  }
  return { bytes: Buffer.concat(chunks), overflow: false };
}

function decode(read: ReadBody, headers: Record<string, string>): { body: unknown; bodyError?: string } {
  if (read.overflow) return { body: undefined, bodyError: `response body larger than ${read.limit} bytes` };
  if (read.bytes.length === 0) return { body: undefined };
  const text = read.bytes.toString('utf8');
  const contentType = (headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (contentType !== 'application/json' && !contentType.endsWith('+json')) return { body: text };
  try {
    return { body: JSON.parse(text) as unknown };
  } catch (caught) {
    return {
      body: undefined,
      bodyError: `invalid JSON: ${caught instanceof Error ? caught.message : 'unparseable'}`,
    };
  }
}

function describeNetworkError(caught: unknown, timeoutMs: number): { code?: string; message: string } {
  if (!(caught instanceof Error)) return { message: String(caught) };
  const code = 'code' in caught && typeof caught.code === 'string' ? caught.code : undefined;
  // AbortSignal.timeout rejects with a DOMException named TimeoutError (its numeric code is 23).
  if (caught.name === 'TimeoutError' || (code !== undefined && TIMEOUT_CODES.has(code))) {
    return {
      code: 'TIMEOUT',
      message: `no complete response within ${timeoutMs} ms (${code ?? caught.name})`,
    };
  }
  // undici wraps the socket's error (ECONNRESET, ECONNREFUSED) as `cause`; that code says more.
  const cause = caught.cause;
  const causeCode =
    cause instanceof Error && 'code' in cause && typeof cause.code === 'string' ? cause.code : undefined;
  const message = cause instanceof Error ? `${caught.message}: ${cause.message}` : caught.message;
  const best = causeCode ?? code;
  return best === undefined ? { message } : { code: best, message };
}

function elapsed(started: number): number {
  return Math.round(performance.now() - started);
}
