/** What one request to the parsing API produced, as the client reports it (it never throws). */
export type ApiResult =
  | {
      kind: 'response';
      status: number;
      /** Response headers, names lower-case, repeated headers joined with ", ". */
      headers: Readonly<Record<string, string>>;
      /** Parsed JSON for a JSON content type, the text otherwise, undefined when unreadable. */
      body: unknown;
      /** Why `body` is undefined although the response had one (too large, invalid JSON). */
      bodyError?: string;
    }
  | {
      kind: 'network';
      /** `code` is Node's or undici's error code; `TIMEOUT` for any of the client's timeouts. */
      error: { code?: string; message: string };
    };
