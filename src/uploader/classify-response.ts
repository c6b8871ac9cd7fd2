import { STATUS_CODES } from 'node:http';
import { englishIssueMessages } from '../english-issues.ts';
import type { ApiResult } from '../parsing-api/api-result.ts';
import {
  type Document,
  type DocumentWarning,
  documentSchema,
  type RequestError,
  requestErrorSchema,
} from '../parsing-api/document-schema.ts';

/**
 * The retry policy (docs/parsing-api.md, "How each answer is treated") as one pure function: what one
 * attempt's result means for the attachment. The worker does the I/O and the bookkeeping;
 * every decision about retrying, pausing or giving up is made here.
 */

export type Classification =
  | { outcome: 'uploaded'; documentIdentifier: string; warnings: DocumentWarning[] }
  | {
      outcome: 'rejected';
      documentIdentifier: string;
      errorCode: string;
      errorDetail: string;
      warnings: DocumentWarning[];
    }
  | { outcome: 'retry'; reason: string; retryAfter?: string }
  | { outcome: 'unauthorized'; status: number; detail: string }
  | { outcome: 'failed'; reason: string; detail: string; requestError?: RequestError };

export interface ClassifyInput {
  result: ApiResult;
  /** The attempt that produced `result`, 1-based. */
  attempt: number;
  /** `upload.attempts`: after this many, a transient failure becomes `failed`. */
  maxAttempts: number;
}

/**
 * Longest detail kept, in characters: it ends up in the message record and in logs, and a
 * proxy's HTML error page has no business filling either.
 */
const MAX_DETAIL_CHARS = 500;

export function classifyResponse(input: ClassifyInput): Classification {
  return inspectResponse(input).verdict;
}

/** The verdict, and the Document a 2xx carried (null otherwise), for the worker to record. */
export interface InspectedResponse {
  verdict: Classification;
  document: Document | null;
}

/** classifyResponse, also handing back the validated Document so it is parsed once. */
export function inspectResponse(input: ClassifyInput): InspectedResponse {
  const { result } = input;
  if (result.kind === 'network') {
    const cause = networkCause(result.error);
    return { verdict: transient(input, cause, cause, undefined), document: null };
  }
  const { status } = result;
  if (status >= 200 && status < 300) return classifyDocument(result.status, result.body, result.bodyError);
  return { verdict: classifyFailure(input, result.status, result.body, result.headers), document: null };
}

function classifyFailure(
  input: ClassifyInput,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>>,
): Classification {
  const requestError = parseRequestError(body);
  const label = statusLabel(status);
  const detail = describeBody(body, requestError) ?? label;
  // The key is wrong for every job, not just this one: the workers pause instead of failing.
  if (status === 401 || status === 403) return { outcome: 'unauthorized', status, detail };
  if (status === 408 || status === 429 || status >= 500) {
    const cause = detail === label ? label : `${label}: ${detail}`;
    return transient(input, cause, detail, headers['retry-after'], requestError);
  }
  // Other 4xx, and the 1xx/3xx the client never follows: asking again gets the same answer.
  const failure = { outcome: 'failed' as const, reason: label, detail };
  return requestError ? { ...failure, requestError } : failure;
}

function transient(
  input: ClassifyInput,
  cause: string,
  detail: string,
  retryAfter: string | undefined,
  requestError?: RequestError,
): Classification {
  if (input.attempt < input.maxAttempts) {
    return retryAfter === undefined
      ? { outcome: 'retry', reason: cause }
      : { outcome: 'retry', reason: cause, retryAfter };
  }
  const failure = {
    outcome: 'failed' as const,
    reason: `gave up after ${input.attempt} attempts: ${cause}`,
    detail,
  };
  return requestError ? { ...failure, requestError } : failure;
}

function classifyDocument(status: number, body: unknown, bodyError: string | undefined): InspectedResponse {
  // Never retried: the service may well have created the document, and a second upload of
  // it would be a duplicate (or, with rejectDuplicates, a false rejection).
  const notRetried = 'not retried, since the document may exist and a retry could duplicate it';
  if (bodyError !== undefined) {
    const reason = `${statusLabel(status)} with an unreadable body; ${notRetried}`;
    return { verdict: { outcome: 'failed', reason, detail: truncate(bodyError) }, document: null };
  }
  const parsed = documentSchema.safeParse(body, { error: englishIssueMessages });
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'body'}: ${issue.message}`);
    const reason = `${statusLabel(status)} whose body is not a Document (no valid meta.identifier); ${notRetried}`;
    return { verdict: { outcome: 'failed', reason, detail: truncate(issues.join('; ')) }, document: null };
  }
  const document = parsed.data;
  const warnings = document.warnings ?? [];
  const documentIdentifier = document.meta.identifier;
  // The error is mirrored in meta with failed=true (docs/parsing-api.md); either one means rejected.
  const errorCode = document.error?.errorCode ?? (document.meta.failed ? document.meta.errorCode : undefined);
  if (errorCode === undefined && !document.meta.failed) {
    return { verdict: { outcome: 'uploaded', documentIdentifier, warnings }, document };
  }
  const verdict: Classification = {
    outcome: 'rejected',
    documentIdentifier,
    errorCode: errorCode ?? 'unknown',
    errorDetail: truncate(document.error?.errorDetail ?? document.meta.errorDetail ?? ''),
    warnings,
  };
  return { verdict, document };
}

/** How the reason of an attempt that timed out begins (networkCause); read by isTimeoutReason. */
const TIMED_OUT = 'timed out: ';

/**
 * Whether an entry's reason says its last attempt timed out: the service got the request and
 * may still be working on it (next-step.ts waits before trusting a lookup that finds nothing).
 */
export function isTimeoutReason(reason: string | null | undefined): boolean {
  return reason?.startsWith(TIMED_OUT) ?? false;
}

function networkCause(error: { code?: string; message: string }): string {
  if (error.code === 'TIMEOUT') return `${TIMED_OUT}${error.message}`;
  return `network error ${error.code ?? 'without code'}: ${error.message}`;
}

function parseRequestError(body: unknown): RequestError | undefined {
  const parsed = requestErrorSchema.safeParse(body);
  return parsed.success ? parsed.data : undefined;
}

/** `file: invalid: unsupported file type; wait: invalid: Must be a valid boolean.` */
export function summariseRequestError(error: RequestError): string {
  if (error.errors.length === 0) return error.type;
  return error.errors
    .map((item) =>
      [item.attr, item.code, item.detail].filter((part) => part != null && part !== '').join(': '),
    )
    .join('; ');
}

function describeBody(body: unknown, requestError: RequestError | undefined): string | undefined {
  if (requestError) return truncate(summariseRequestError(requestError));
  if (typeof body === 'string' && body.trim() !== '') return truncate(body.trim().replace(/\s+/g, ' '));
  return undefined;
}

function statusLabel(status: number): string {
  const text = STATUS_CODES[status];
  return text ? `HTTP ${status} ${text}` : `HTTP ${status}`;
}

function truncate(text: string): string {
  return text.length <= MAX_DETAIL_CHARS ? text : `${text.slice(0, MAX_DETAIL_CHARS - 1)}…`;
}
