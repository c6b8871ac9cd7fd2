import { isIPv4, isIPv6 } from 'node:net';
import { FormData, Pool } from 'undici';
import type { Logger } from '../logger.ts';
import type { ApiResult } from './api-result.ts';

/**
 * The HTTP side of the uploader: one multipart POST per document, reported as an ApiResult
 * for classify-response.ts. It never throws for HTTP or network failures, so the worker has
 * one code path for every outcome; only a programming error (a bad argument) throws.
 */

export interface ParsingApiClientOptions {
  /** `https://api.eu1.example.com`; plain `http:` only to a loopback host. A path prefix is kept. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>`; never logged, never in an error message. */
  apiKey: string;
  /**
   * Longest one request may take, in milliseconds, from sending to the last response byte.
   * With `wait=true` the service answers only after parsing, so this must cover parsing.
   */
  timeoutMs: number;
  logger: Logger;
  /** Send to an http: base URL that is not loopback (api.allowInsecureHttp); default false. */
  allowInsecureHttp?: boolean;
  /** Parallel connections to the service; default 8 (the default `upload.concurrency`). */
  connections?: number;
  /** Most response-body bytes read; default 1 MiB. A larger body is reported, not read. */
  maxResponseBytes?: number;
}

export interface UploadDocumentInput {
  file: Buffer;
  /** Sent as the part's `filename` and, unless `fields` has one, as the `fileName` field. */
  fileName: string;
  contentType: string;
  /** Form fields already encoded (booleans as "true"/"false"); a name may repeat. */
  fields: ReadonlyArray<readonly [name: string, value: string]>;
  /** Ask for the answer in snake_case (`?snake_case=true`, parsing-api.md §4.2); default false. */
  snakeCase?: boolean;
}

export interface GetDocumentOptions {
  /** Ask for the answer in snake_case (`?snake_case=true`); default false. */
  snakeCase?: boolean;
}

export interface ParsingApiClient {
  uploadDocument(input: UploadDocumentInput): Promise<ApiResult>;
  getDocument(identifier: string, options?: GetDocumentOptions): Promise<ApiResult>;
  /** `GET /v3/documents?custom_identifier=…`: the documents an identifier names. */
  findDocuments(customIdentifier: string, options?: GetDocumentOptions): Promise<ApiResult>;
  /** Idempotent; waits for requests in flight. */
  close(): Promise<void>;
  /** Ends the requests still in flight at once (their work was handed back), then closes. */
  destroy(): Promise<void>;
}

/** 1 MiB: a Document without `data` is a few KiB; error pages are smaller still. */
const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;

/** undici's own timeout codes, all reported as `TIMEOUT` so the classifier has one name. */
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

export function createParsingApiClient(options: ParsingApiClientOptions): ParsingApiClient {
  const base = parseBaseUrl(options.baseUrl, options.allowInsecureHttp);
  if (!/^[\x21-\x7e]+$/.test(options.apiKey)) {
    // The value is not echoed: it is the secret.
    throw new Error('apiKey is empty or has characters not allowed in an HTTP header');
  }
  if (!Number.isInteger(options.timeoutMs) || options.timeoutMs <= 0) {
    throw new Error(`timeoutMs must be a positive integer, got ${options.timeoutMs}`);
  }
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const logger = options.logger.child({ component: 'parsing-api-client', origin: base.origin });
  const authorization = `Bearer ${options.apiKey}`;
  const pool = new Pool(base.origin, {
    connections: options.connections ?? 8,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });
  let closing: Promise<void> | undefined;

  async function send(method: 'GET' | 'POST', path: string, body?: FormData): Promise<ApiResult> {
    const started = performance.now();
    try {
      const response = await pool.request({
        path,
        method,
        headers: { authorization, accept: 'application/json' },
        body: body ?? null,
        // The overall deadline; undici's headers/body timeouts only bound the gaps.
        signal: AbortSignal.timeout(options.timeoutMs),
      });
      const headers = flattenHeaders(response.headers);
      const read = await readBoundedBody(response.body, maxResponseBytes);
      const result: ApiResult = {
        kind: 'response',
        status: response.statusCode,
        headers,
        ...decode(read, headers),
      };
      logger.debug(
        { method, path, status: response.statusCode, ms: elapsed(started) },
        'parsing API answered',
      );
      return result;
    } catch (caught) {
      const error = describeNetworkError(caught, options.timeoutMs);
      logger.debug({ method, path, code: error.code, ms: elapsed(started) }, 'parsing API unreachable');
      return { kind: 'network', error };
    }
  }

  return {
    uploadDocument(input) {
      const form = new FormData();
      for (const [name, value] of input.fields) form.append(name, value);
      // The service's clients send the name twice: on the part and as a field (facts file).
      if (!input.fields.some(([name]) => name === 'fileName')) form.append('fileName', input.fileName);
      form.append('file', new File([input.file], input.fileName, { type: input.contentType }));
      return send('POST', `${base.pathPrefix}/v3/documents${query(input.snakeCase)}`, form);
    },
    getDocument(identifier, documentOptions = {}) {
      const path = `${base.pathPrefix}/v3/documents/${encodeURIComponent(identifier)}`;
      return send('GET', `${path}${query(documentOptions.snakeCase)}`);
    },
    findDocuments(customIdentifier, documentOptions = {}) {
      const search = new URLSearchParams({ custom_identifier: customIdentifier });
      if (documentOptions.snakeCase === true) search.set('snake_case', 'true');
      return send('GET', `${base.pathPrefix}/v3/documents?${search}`);
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

/** The query string: `snake_case=true` only when asked for, so the default request stays bare. */
function query(snakeCase: boolean | undefined): string {
  return snakeCase === true ? '?snake_case=true' : '';
}

interface BaseUrl {
  origin: string;
  /** The base URL's path without a trailing slash: "" or "/prefix". */
  pathPrefix: string;
}

/** Refuses what would leak the key: plain http to anything but this machine, or userinfo. */
export function parseBaseUrl(baseUrl: string, allowInsecureHttp = false): BaseUrl {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new Error(`api.baseUrl is not a URL: ${JSON.stringify(baseUrl)}`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new Error(
      'api.baseUrl must not carry credentials; the API key is sent in the Authorization header',
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new Error(`api.baseUrl must be https:, got ${url.protocol} (${url.origin})`);
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname) && !allowInsecureHttp) {
    throw new Error(
      `api.baseUrl ${url.origin} uses plain http to a host that is not loopback; the API key would ` +
        'cross the network unencrypted. Use https (plain http is allowed only to 127.0.0.0/8, ::1, localhost).',
    );
  }
  return { origin: url.origin, pathPrefix: url.pathname.replace(/\/+$/, '') };
}

/** 127.0.0.0/8, ::1 and localhost, as the service's official clients allow. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  if (host.toLowerCase() === 'localhost') return true;
  if (isIPv4(host)) return host.startsWith('127.');
  if (isIPv6(host)) return host === '::1';
  return false;
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    flat[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

type ReadBody = { bytes: Buffer; overflow: boolean };

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
      return { bytes: Buffer.alloc(0), overflow: true };
    }
    chunks.push(chunk);
  }
  return { bytes: Buffer.concat(chunks), overflow: false };
}

function decode(read: ReadBody, headers: Record<string, string>): { body: unknown; bodyError?: string } {
  if (read.overflow) return { body: undefined, bodyError: 'response body larger than the client reads' };
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
