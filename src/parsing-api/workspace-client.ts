import { Pool } from 'undici';
import { type RequestError, requestErrorSchema } from './document-schema.ts';
import { parseBaseUrl } from './parsing-api-client.ts';
import { type ServiceWorkspace, serviceWorkspaceSchema, type WorkspaceUpdate } from './service-workspace.ts';

/**
 * The workspace side of the parsing API: `GET` and `PATCH /v3/workspaces/{identifier}`
 * (parsing-api.md §4.1, parsing-api-facts.md "Workspaces"), for the `workspace` commands.
 * Unlike the uploader's client, which reports every outcome for a retry policy, this one is
 * for a person at a terminal: it resolves with the Workspace or throws a WorkspaceApiError
 * that says what the service answered. The same refusals as the uploader's: plain http only
 * to loopback (unless allowed), no credentials in the URL; the key is sent only in the
 * Authorization header and never appears in an error.
 */

export interface WorkspaceClientOptions {
  /** `https://api.eu1.example.com`; a path prefix is kept. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>`. */
  apiKey: string;
  /** Longest one request may take, in milliseconds, from sending to the last response byte. */
  timeoutMs: number;
  /** Send to an http: base URL that is not loopback (api.allowInsecureHttp); default false. */
  allowInsecureHttp?: boolean;
}

export interface WorkspaceClient {
  getWorkspace(identifier: string): Promise<ServiceWorkspace>;
  /** Sends exactly the fields of `update`; resolves with the updated Workspace. */
  updateWorkspace(identifier: string, update: WorkspaceUpdate): Promise<ServiceWorkspace>;
  /** Idempotent. */
  close(): Promise<void>;
}

export type WorkspaceApiErrorKind =
  /** The service answered with an error status; `status` and, when it sent one, `requestError`. */
  | 'refused'
  /** No answer: connection refused, reset, timed out. */
  | 'unreachable'
  /** A 2xx whose body is not a Workspace. */
  | 'invalid_response';

export class WorkspaceApiError extends Error {
  readonly kind: WorkspaceApiErrorKind;
  readonly status: number | undefined;
  readonly requestError: RequestError | undefined;

  constructor(
    kind: WorkspaceApiErrorKind,
    message: string,
    details: { status?: number; requestError?: RequestError; cause?: unknown } = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'WorkspaceApiError';
    this.kind = kind;
    this.status = details.status;
    this.requestError = details.requestError;
  }
}

/** 1 MiB: a Workspace is a few KiB even with its theme; an error page is smaller. */
const MAX_RESPONSE_BYTES = 1024 * 1024;
/** Characters of a non-RequestError error body quoted in a message (a proxy's HTML page). */
const MAX_QUOTED_CHARS = 200;

export function createWorkspaceClient(options: WorkspaceClientOptions): WorkspaceClient {
  const base = parseBaseUrl(options.baseUrl, options.allowInsecureHttp);
  if (!/^[\x21-\x7e]+$/.test(options.apiKey)) {
    // The value is not echoed: it is the secret.
    throw new Error('apiKey is empty or has characters not allowed in an HTTP header');
  }
  const authorization = `Bearer ${options.apiKey}`;
  const pool = new Pool(base.origin, {
    connections: 2,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });
  let closing: Promise<void> | undefined;

  async function send(method: 'GET' | 'PATCH', identifier: string, body?: WorkspaceUpdate) {
    const path = `${base.pathPrefix}/v3/workspaces/${encodeURIComponent(identifier)}`;
    const where = `${method} ${base.origin}${path}`;
    let status: number;
    let text: string | undefined;
    try {
      const response = await pool.request({
        path,
        method,
        headers: {
          authorization,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? null : JSON.stringify(body),
        signal: AbortSignal.timeout(options.timeoutMs),
      });
      status = response.statusCode;
      text = await readBounded(response.body);
    } catch (caught) {
      throw new WorkspaceApiError(
        'unreachable',
        `${where}: no answer: ${describe(caught, options.timeoutMs)}`,
        { cause: caught },
      );
    }
    if (text === undefined) {
      throw new WorkspaceApiError(
        'invalid_response',
        `${where}: ${status} with a body larger than ${MAX_RESPONSE_BYTES} bytes`,
        { status },
      );
    }
    const json = parseJson(text);
    if (status < 200 || status > 299) {
      const requestError = requestErrorSchema.safeParse(json);
      if (requestError.success) {
        throw new WorkspaceApiError(
          'refused',
          `${where}: ${status}: ${requestErrorDetail(requestError.data)}`,
          { status, requestError: requestError.data },
        );
      }
      const quoted = text.trim().slice(0, MAX_QUOTED_CHARS);
      throw new WorkspaceApiError('refused', `${where}: ${status}${quoted ? `: ${quoted}` : ''}`, { status });
    }
    const workspace = serviceWorkspaceSchema.safeParse(json);
    if (!workspace.success) {
      const problem = workspace.error.issues[0];
      const at = problem?.path.join('.') || 'the body';
      throw new WorkspaceApiError(
        'invalid_response',
        `${where}: ${status} but not a Workspace (${at}: ${problem?.message ?? 'invalid'})`,
        { status },
      );
    }
    return workspace.data;
  }

  return {
    getWorkspace: (identifier) => send('GET', identifier),
    updateWorkspace: (identifier, update) => send('PATCH', identifier, update),
    close() {
      closing ??= pool.close();
      return closing;
    },
  };
}

/** `attr: detail` for each error of a RequestError, `; `-separated; the form the CLI prints. */
export function requestErrorDetail(error: RequestError): string {
  if (error.errors.length === 0) return error.type;
  return error.errors.map(({ attr, detail }) => (attr ? `${attr}: ${detail}` : detail)).join('; ');
}

/** The body as UTF-8, or undefined when it is over MAX_RESPONSE_BYTES (the rest is not read). */
async function readBounded(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_RESPONSE_BYTES) {
      body.destroy();
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // Not JSON (an empty body, a proxy's page): the callers report the text instead.
    return undefined;
  }
}

function describe(caught: unknown, timeoutMs: number): string {
  if (!(caught instanceof Error)) return String(caught);
  // AbortSignal.timeout rejects with a DOMException named TimeoutError.
  if (caught.name === 'TimeoutError') return `no complete response within ${timeoutMs} ms`;
  // undici wraps the socket's error (ECONNREFUSED, ECONNRESET) as `cause`.
  const cause = caught.cause;
  return cause instanceof Error ? `${caught.message}: ${cause.message}` : caught.message;
}
