import { type Client, FormData } from 'undici';

/**
 * Raw requests to the mock parsing API for its own tests: undici's Client, no retries, the
 * answer as status, headers, text and (for JSON) the parsed body.
 */

export interface MockReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: unknown;
}

export async function call(
  client: Client,
  method: 'GET' | 'POST' | 'DELETE' | 'PATCH',
  path: string,
  options: { body?: FormData | string; headers?: Record<string, string> } = {},
): Promise<MockReply> {
  const response = await client.request({
    method,
    path,
    body: options.body ?? null,
    headers: options.headers ?? {},
  });
  const text = await response.body.text();
  const json: unknown =
    response.headers['content-type'] === 'application/json' ? JSON.parse(text) : undefined;
  return { status: response.statusCode, headers: response.headers, text, json };
}

export interface UploadFile {
  bytes: Buffer;
  name: string;
  type: string;
}

/** The multipart form of `POST /v3/documents`: text fields in order, then the file part. */
export function uploadForm(
  file: UploadFile | null,
  fields: ReadonlyArray<readonly [string, string]> = [],
): FormData {
  const body = new FormData();
  for (const [name, value] of fields) body.append(name, value);
  if (file) body.append('file', new File([file.bytes], file.name, { type: file.type }));
  return body;
}

/** The parts of a Document the tests read. */
export interface DocumentReply {
  extractor: string;
  meta: Record<string, unknown> & { identifier: string; ready: boolean; failed: boolean };
  data: Record<string, unknown>;
  error?: { errorCode: string; errorDetail: string };
  warnings: Array<{ warningCode: string; warningDetail: string }>;
}

export const asDocument = (json: unknown) => json as DocumentReply;
