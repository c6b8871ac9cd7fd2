import * as z from 'zod';

/**
 * Faults a test or a user injects so the parsing API fails the way the real service or the
 * network can: a status (with an optional body, headers and `Retry-After`), a connection
 * dropped before the request body is read or after it was read and handled, a hang, an
 * upload committed late (read at once, its document created and answered only after
 * `commitDelayMs`, even when the client has given up meanwhile), and latency before any of
 * these or before a normal answer. Only the /v3 API is subject to
 * them, never /_mock. A fault comes from the request's `X-Mock-Fault` header
 * (parse-fault-header.ts) or from this queue, which `POST /_mock/faults` and
 * `MockApi.enqueueFault` fill: first in, first out, each entry serving the next `times`
 * requests it matches (default one; `"always"` until `DELETE /_mock/faults`).
 */

/** Longest injected latency, in ms: past any client timeout a test sets, short of vitest's 30 s test timeout. */
export const MAX_LATENCY_MS = 25_000;

/** An HTTP token (RFC 9110 §5.6.2), so a fault's header cannot make writeHead throw. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Visible characters, spaces and tabs: no CR or LF to split the response. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

export const mockFaultSchema = z
  .strictObject({
    status: z.int().min(200).max(599).optional(),
    /** JSON body; a string is sent as text/plain. Default: the RequestError for the status. */
    body: z.unknown().optional(),
    headers: z
      .record(
        z.string().regex(HEADER_NAME, 'not a header name'),
        z.string().regex(HEADER_VALUE, 'not a header value'),
      )
      .optional(),
    /** Sent as `Retry-After`: seconds, or an HTTP date as text. */
    retryAfter: z.union([z.int().min(0), z.string().regex(HEADER_VALUE).min(1)]).optional(),
    /** `true` is the older spelling of `"before"`. */
    drop: z.union([z.literal(true), z.enum(['before', 'after'])]).optional(),
    hang: z.literal(true).optional(),
    /**
     * Milliseconds between reading an upload and creating its document (then answering): a
     * slow service that finishes work its client has given up on. Only the upload route has
     * a commit to delay; elsewhere the request is answered normally.
     */
    commitDelayMs: z.int().min(1).max(MAX_LATENCY_MS).optional(),
    /** Milliseconds before the fault (or the normal answer) is served. */
    latencyMs: z.int().min(0).max(MAX_LATENCY_MS).optional(),
    /** How many matching requests the entry serves; default 1. Queue entries only. */
    times: z.union([z.int().min(1), z.literal('always')]).optional(),
    /** The request method the entry applies to, or `*`; default `POST`. Queue entries only. */
    method: z
      .string()
      .regex(/^([A-Z]+|\*)$/, 'an upper-case method or *')
      .optional(),
    /** The /v3 path (or path prefix) the entry applies to; default `/v3/documents`. */
    path: z
      .string()
      .regex(/^\/v3(\/|$)/, 'a path under /v3')
      .optional(),
  })
  .superRefine((fault, issues) => {
    const actions = [fault.status, fault.drop, fault.hang, fault.commitDelayMs].filter(
      (value) => value !== undefined,
    );
    if (actions.length > 1) {
      issues.addIssue({ code: 'custom', message: 'give one of status, drop, hang and commitDelayMs' });
    }
    if (actions.length === 0 && fault.latencyMs === undefined) {
      issues.addIssue({ code: 'custom', message: 'give status, drop, hang, commitDelayMs or latencyMs' });
    }
    const statusOnly = [fault.body, fault.headers, fault.retryAfter].some((value) => value !== undefined);
    if (statusOnly && fault.status === undefined) {
      issues.addIssue({ code: 'custom', message: 'body, headers and retryAfter need a status' });
    }
  });

/** A fault as a test or `POST /_mock/faults` gives it, e.g. `{status: 429, retryAfter: 2}`. */
export type MockFault = z.input<typeof mockFaultSchema>;

export type FaultAction =
  | { kind: 'status'; status: number; body: unknown; headers: Record<string, string> }
  | { kind: 'drop'; when: 'before' | 'after' }
  | { kind: 'hang' }
  /** The route runs, but an upload's document is created (and answered) `commitDelayMs` later. */
  | { kind: 'late'; commitDelayMs: number }
  /** Latency alone: after the delay the request is answered normally. */
  | { kind: 'none' };

/** A validated fault, ready to serve. */
export interface Fault {
  latencyMs: number;
  action: FaultAction;
}

/** One queue entry as `GET /_mock/faults` shows it. */
export interface FaultEntry {
  fault: Fault;
  method: string;
  path: string;
  /** Requests it will still serve; null for `"always"`. */
  remaining: number | null;
}

export interface FaultQueue {
  /** Validates (throws a ZodError naming every problem) and appends. */
  enqueue(fault: MockFault): void;
  /** The fault for this request, counted against its entry; undefined when none matches. */
  take(request: { method: string; path: string }): Fault | undefined;
  /** Removes every entry, `"always"` ones included. */
  clear(): void;
  list(): FaultEntry[];
}

export function createFaultQueue(): FaultQueue {
  let entries: FaultEntry[] = [];
  return {
    enqueue(input) {
      const parsed = mockFaultSchema.parse(input);
      entries.push({
        fault: toFault(parsed),
        method: parsed.method ?? 'POST',
        path: parsed.path ?? '/v3/documents',
        remaining: parsed.times === 'always' ? null : (parsed.times ?? 1),
      });
    },
    take(request) {
      const entry = entries.find((candidate) => matches(candidate, request));
      if (entry === undefined) return undefined;
      if (entry.remaining !== null) {
        entry.remaining -= 1;
        if (entry.remaining === 0) entries = entries.filter((other) => other !== entry);
      }
      return entry.fault;
    },
    clear() {
      entries = [];
    },
    list: () => entries.map((entry) => ({ ...entry })),
  };
}

/** A validated fault (from the schema) in the form the server serves. */
export function toFault(fault: z.output<typeof mockFaultSchema>): Fault {
  const latencyMs = fault.latencyMs ?? 0;
  if (fault.status !== undefined) {
    const headers: Record<string, string> = { ...fault.headers };
    if (fault.retryAfter !== undefined) headers['retry-after'] = String(fault.retryAfter);
    return { latencyMs, action: { kind: 'status', status: fault.status, body: fault.body, headers } };
  }
  if (fault.drop !== undefined) {
    return { latencyMs, action: { kind: 'drop', when: fault.drop === 'after' ? 'after' : 'before' } };
  }
  if (fault.hang) return { latencyMs, action: { kind: 'hang' } };
  if (fault.commitDelayMs !== undefined) {
    return { latencyMs, action: { kind: 'late', commitDelayMs: fault.commitDelayMs } };
  }
  return { latencyMs, action: { kind: 'none' } };
}

/** The method matches (or is `*`) and the path is the entry's path or below it. */
function matches(entry: FaultEntry, request: { method: string; path: string }): boolean {
  if (entry.method !== '*' && entry.method !== request.method) return false;
  const path = request.path.replace(/\/+$/, '') || '/';
  const prefix = entry.path.replace(/\/+$/, '');
  return path === prefix || path.startsWith(`${prefix}/`);
}
