/**
 * The parsing API's error body for failed requests (README.md, "Authentication and errors"):
 * `{"type": "validation_error", "errors": [{"attr": "file" | null, "code": "invalid", "detail": "…"}]}`.
 * `type` is `validation_error` for bad input, `client_error` for other 4xx and
 * `server_error` for 5xx, in the style of drf-standardized-errors, which the shape matches.
 */
export interface RequestErrorBody {
  type: 'validation_error' | 'client_error' | 'server_error';
  errors: Array<{ attr: string | null; code: string; detail: string }>;
}

/** One 400 for one bad form field (or the form as a whole, `attr: null`). */
export function validationError(attr: string | null, code: string, detail: string): RequestErrorBody {
  return { type: 'validation_error', errors: [{ attr, code, detail }] };
}

export function clientError(code: string, detail: string, attr: string | null = null): RequestErrorBody {
  return { type: 'client_error', errors: [{ attr, code, detail }] };
}

export function serverError(detail: string): RequestErrorBody {
  return { type: 'server_error', errors: [{ attr: null, code: 'error', detail }] };
}

/** The body a status-only fault is answered with: the RequestError a real failure would carry. */
export function errorForStatus(status: number): RequestErrorBody {
  if (status >= 500) return serverError(`A server error occurred (mock fault ${status}).`);
  if (status === 401) return clientError('authentication_failed', 'Invalid token.');
  if (status === 403)
    return clientError('permission_denied', 'You do not have permission to perform this action.');
  if (status === 429) return clientError('throttled', 'Request was throttled.');
  return clientError('error', `Mock fault ${status}.`);
}

export const notFound = (): RequestErrorBody => clientError('not_found', 'Not found.');
