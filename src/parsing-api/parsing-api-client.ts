import { FormData } from 'undici';
import type { Logger } from '../logger.ts';
import type { ApiResult } from './api-result.ts';
import { type ApiTransportOptions, createApiTransport } from './api-transport.ts';
import { type DocumentListing, listDocuments } from './document-list.ts';

/**
 * The document calls of the parsing API, for the uploader and completion tracking: one
 * multipart POST per document, a document read back, the documents of a customIdentifier.
 * Each is reported as the transport's ApiResult (api-transport.ts) for classify-response.ts,
 * the listing as every page's ApiResult (document-list.ts): it never throws for HTTP or network failures, so the worker has one code path for every
 * outcome; only a programming error (a bad argument) throws.
 */

export interface ParsingApiClientOptions extends ApiTransportOptions {
  logger: Logger;
}

export interface UploadDocumentInput {
  file: Buffer;
  /** Sent as the part's `filename` and, unless `fields` has one, as the `fileName` field. */
  fileName: string;
  contentType: string;
  /** Form fields already encoded (booleans as "true"/"false"); a name may repeat. */
  fields: ReadonlyArray<readonly [name: string, value: string]>;
  /** Ask for the answer in snake_case (`?snake_case=true`, docs/parsing-api.md); default false. */
  snakeCase?: boolean;
}

export interface GetDocumentOptions {
  /** Ask for the answer in snake_case (`?snake_case=true`); default false. */
  snakeCase?: boolean;
}

export interface ParsingApiClient {
  uploadDocument(input: UploadDocumentInput): Promise<ApiResult>;
  getDocument(identifier: string, options?: GetDocumentOptions): Promise<ApiResult>;
  /**
   * `GET /v3/documents?custom_identifier=…`: the documents an identifier names, following
   * `next` pages up to a bound (document-list.ts).
   */
  findDocuments(customIdentifier: string, options?: GetDocumentOptions): Promise<DocumentListing>;
  /** Idempotent; waits for requests in flight. */
  close(): Promise<void>;
  /** Ends the requests still in flight at once (their work was handed back), then closes. */
  destroy(): Promise<void>;
}

export function createParsingApiClient(options: ParsingApiClientOptions): ParsingApiClient {
  const transport = createApiTransport(options);
  return {
    uploadDocument(input) {
      const form = new FormData();
      for (const [name, value] of input.fields) form.append(name, value);
      // The service's clients send the name twice: on the part and as a field (docs/parsing-api.md).
      if (!input.fields.some(([name]) => name === 'fileName')) form.append('fileName', input.fileName);
      form.append('file', new File([input.file], input.fileName, { type: input.contentType }));
      return transport.request({
        method: 'POST',
        path: '/v3/documents',
        snakeCase: input.snakeCase,
        body: form,
      });
    },
    getDocument(identifier, { snakeCase } = {}) {
      return transport.request({
        method: 'GET',
        path: `/v3/documents/${encodeURIComponent(identifier)}`,
        snakeCase,
      });
    },
    findDocuments(customIdentifier, { snakeCase } = {}) {
      const query = { custom_identifier: customIdentifier };
      return listDocuments(transport, { method: 'GET', path: '/v3/documents', query, snakeCase });
    },
    close: () => transport.close(),
    destroy: () => transport.destroy(),
  };
}
