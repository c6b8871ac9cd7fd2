import { englishIssueMessages } from '../english-issues.ts';
import type { ApiResult } from './api-result.ts';
import { type ApiTransportOptions, createApiTransport } from './api-transport.ts';
import { type RequestError, requestErrorSchema } from './document-schema.ts';
import { type ServiceWorkspace, serviceWorkspaceSchema, type WorkspaceUpdate } from './service-workspace.ts';

/**
 * The workspace calls of the parsing API: `GET` and `PATCH /v3/workspaces/{identifier}`
 * (docs/parsing-api.md, "Workspaces"), for the `workspace` commands.
 * They share the uploader's transport (api-transport.ts: its base-URL policy, bearer key,
 * deadline and bounded body) but not its way of reporting: a person at a terminal gets the
 * Workspace or a WorkspaceApiError that says what the service answered, never the key.
 */

export type WorkspaceClientOptions = Pick<
  ApiTransportOptions,
  'baseUrl' | 'apiKey' | 'timeoutMs' | 'allowInsecureHttp'
>;

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
    details: { status?: number; requestError?: RequestError } = {},
  ) {
    super(message);
    this.name = 'WorkspaceApiError';
    this.kind = kind;
    this.status = details.status;
    this.requestError = details.requestError;
  }
}

/** Characters of a non-RequestError error body quoted in a message (a proxy's HTML page). */
const MAX_QUOTED_CHARS = 200;

export function createWorkspaceClient(options: WorkspaceClientOptions): WorkspaceClient {
  // Two connections: every command, `sync` too, sends one request at a time.
  const transport = createApiTransport({ ...options, connections: 2 });

  async function send(method: 'GET' | 'PATCH', identifier: string, update?: WorkspaceUpdate) {
    const path = `/v3/workspaces/${encodeURIComponent(identifier)}`;
    const body = update === undefined ? undefined : { json: update };
    const result = await transport.request({ method, path, body });
    return readWorkspace(result, `${method} ${transport.baseUrl}${path}`);
  }

  return {
    getWorkspace: (identifier) => send('GET', identifier),
    updateWorkspace: (identifier, update) => send('PATCH', identifier, update),
    close: () => transport.close(),
  };
}

/**
 * The Workspace an answer holds, or the WorkspaceApiError that says, after `where`
 * (`GET https://…/v3/workspaces/w`), what came back instead.
 */
export function readWorkspace(result: ApiResult, where: string): ServiceWorkspace {
  if (result.kind === 'network') {
    throw new WorkspaceApiError('unreachable', `${where}: no answer: ${result.error.message}`);
  }
  const { status } = result;
  // Read as JSON whatever the content type says, as a lenient client of a JSON API does.
  const json = typeof result.body === 'string' ? parseJson(result.body) : result.body;
  if (status < 200 || status > 299) {
    const requestError = requestErrorSchema.safeParse(json);
    if (requestError.success) {
      const detail = requestErrorDetail(requestError.data);
      throw new WorkspaceApiError('refused', `${where}: ${status}: ${detail}`, {
        status,
        requestError: requestError.data,
      });
    }
    const quoted = quote(result.body ?? result.bodyError);
    throw new WorkspaceApiError('refused', `${where}: ${status}${quoted ? `: ${quoted}` : ''}`, { status });
  }
  if (result.bodyError !== undefined) {
    throw new WorkspaceApiError('invalid_response', `${where}: ${status}: ${result.bodyError}`, { status });
  }
  const workspace = serviceWorkspaceSchema.safeParse(json, { error: englishIssueMessages });
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

/** `attr: detail` for each error of a RequestError, `; `-separated; the form the CLI prints. */
export function requestErrorDetail(error: RequestError): string {
  if (error.errors.length === 0) return error.type;
  return error.errors.map(({ attr, detail }) => (attr ? `${attr}: ${detail}` : detail)).join('; ');
}

/** The start of an error body, for a message: its text, or its JSON as the service wrote it. */
function quote(body: unknown): string {
  const text = typeof body === 'string' ? body : body === undefined ? '' : JSON.stringify(body);
  return text.trim().slice(0, MAX_QUOTED_CHARS);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // Not JSON (a proxy's page): the error status is reported with the text instead.
    return undefined;
  }
}
