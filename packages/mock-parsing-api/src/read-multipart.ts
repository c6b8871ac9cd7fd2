import type { IncomingMessage } from 'node:http';
import busboy from 'busboy';
import { errorMessage } from './error-message.ts';
import { clientError, type RequestErrorBody, validationError } from './request-error.ts';

/** A multipart upload as the mock received it: every text field, and the `file` part if any. */
export interface MultipartForm {
  /** Field values by name, in arrival order; a repeated name (`limitToExamples`) has several. */
  fields: Record<string, string[]>;
  file: { fileName: string; contentType: string; bytes: Buffer } | null;
}

export type MultipartResult =
  | ({ ok: true } & MultipartForm)
  | { ok: false; status: number; error: RequestErrorBody };

export interface MultipartLimits {
  /** Largest `file` part in bytes; above it the answer is 413. */
  maxFileBytes: number;
}

/** Largest text field, in bytes: `regionBias` JSON and `llmHint` are the long ones. */
const MAX_FIELD_BYTES = 64 * 1024;
/** More fields than any real upload has (the form has 19 names; `limitToExamples` repeats). */
const MAX_FIELDS = 500;

/**
 * Streams a multipart/form-data request through busboy and resolves once the whole request
 * has been read (never rejects): with the form, or with the status and RequestError to send.
 * Only the `file` part is buffered, and only up to the limit; past it the rest is discarded.
 */
export function readMultipart(req: IncomingMessage, limits: MultipartLimits): Promise<MultipartResult> {
  return new Promise((resolve) => {
    const fields = new Map<string, string[]>();
    let file: MultipartForm['file'] = null;
    let problem: MultipartResult | undefined;
    const fail = (status: number, error: RequestErrorBody) => {
      problem ??= { ok: false, status, error };
    };

    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        // undici, curl and browsers send a UTF-8 filename without RFC 2231 encoding.
        defParamCharset: 'utf8',
        limits: { fileSize: limits.maxFileBytes, files: 1, fields: MAX_FIELDS, fieldSize: MAX_FIELD_BYTES },
      });
    } catch (caught) {
      // busboy throws at once on a missing or malformed boundary.
      resolve({ ok: false, status: 400, error: parseError(errorMessage(caught)) });
      return;
    }

    parser.on('field', (name, value, info) => {
      if (info.nameTruncated || info.valueTruncated) {
        fail(400, validationError(name, 'max_length', `The field is longer than ${MAX_FIELD_BYTES} bytes.`));
        return;
      }
      const values = fields.get(name) ?? [];
      values.push(value);
      fields.set(name, values);
    });
    parser.on('file', (name, stream, info) => {
      if (name !== 'file') {
        stream.resume();
        fail(400, validationError(name, 'invalid', 'Only the "file" part may carry a file.'));
        return;
      }
      let chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('limit', () => {
        chunks = [];
        fail(
          413,
          clientError('file_too_large', `The file is larger than ${limits.maxFileBytes} bytes.`, 'file'),
        );
      });
      stream.on('end', () => {
        if (stream.truncated) return;
        file = { fileName: info.filename ?? '', contentType: info.mimeType, bytes: Buffer.concat(chunks) };
      });
    });
    parser.on('filesLimit', () =>
      fail(400, validationError('file', 'invalid', 'Only one file may be uploaded.')),
    );
    parser.on('fieldsLimit', () =>
      fail(400, validationError(null, 'invalid', `More than ${MAX_FIELDS} fields.`)),
    );
    parser.on('error', (caught) => {
      req.unpipe(parser);
      // Read (and drop) the rest so the 400 reaches the client instead of a reset.
      req.resume();
      resolve({ ok: false, status: 400, error: parseError(errorMessage(caught)) });
    });
    parser.on('close', () => resolve(problem ?? { ok: true, fields: Object.fromEntries(fields), file }));
    // A client that goes away mid-upload: busboy would wait for the rest for ever.
    req.once('close', () => {
      if (!req.complete) resolve({ ok: false, status: 400, error: parseError('the request was aborted') });
    });
    req.pipe(parser);
  });
}

function parseError(message: string): RequestErrorBody {
  return clientError('parse_error', `Multipart form parse error - ${message}`);
}
