import { randomBytes } from 'node:crypto';

/**
 * The documents the mock has "parsed", by identifier, in the camelCase shape of
 * parsing-api.md §2.8. Parsing takes no time here: a document is stored ready (or failed)
 * at once; an upload with `wait=false` is answered with the pending view of it, and a later
 * GET sees it finished, which is what a poller expects.
 */

export interface MockDocumentMeta {
  identifier: string;
  customIdentifier: string | null;
  fileName: string | null;
  ready: boolean;
  readyDt: string | null;
  failed: boolean;
  expiryTime: string | null;
  language: string | null;
  documentType: string | null;
  collection: { identifier: string } | null;
  workspace: { identifier: string } | null;
  createdDt: string;
  errorCode: string | null;
  errorDetail: string | null;
  isArchived: boolean;
  isConfirmed: boolean;
  isRejected: boolean;
  sourceEmail: string | null;
  sourceEmailAddress: string | null;
}

export interface MockDocument {
  extractor: string;
  meta: MockDocumentMeta;
  /** The parse result; the mock extracts nothing, so it is always empty. */
  data: Record<string, unknown>;
  error?: { errorCode: string; errorDetail: string };
  warnings: Array<{ warningCode: string; warningDetail: string }>;
}

export interface NewDocument {
  fileName: string | null;
  customIdentifier: string | null;
  workspace: string | null;
  collection: string | null;
  documentType: string | null;
  language: string | null;
  expiryTime: string | null;
  /** SHA-256 of the file's bytes; null for an upload by `url`. */
  sha256: string | null;
  rejectDuplicates: boolean;
}

export interface DocumentFilter {
  customIdentifier?: string;
  ready?: boolean;
  failed?: boolean;
}

export interface DocumentStore {
  readonly documents: ReadonlyMap<string, MockDocument>;
  create(input: NewDocument, now: Date): MockDocument;
  list(filter: DocumentFilter): MockDocument[];
}

/**
 * The error code of a rejected duplicate. The service does not publish it (parsing-api.md §7
 * only says parsing fails); this name is the mock's, and the gateway must not depend on it.
 */
export const DUPLICATE_ERROR_CODE = 'duplicate_document';

export function createDocumentStore(): DocumentStore {
  const documents = new Map<string, MockDocument>();
  /** `${workspace}\n${sha256}` → identifier of the first accepted upload of those bytes. */
  const firstByContent = new Map<string, string>();

  return {
    documents,
    create(input, now) {
      const identifier = newIdentifier(documents);
      const contentKey = input.sha256 === null ? undefined : `${input.workspace ?? ''}\n${input.sha256}`;
      const original = contentKey === undefined ? undefined : firstByContent.get(contentKey);
      const error =
        input.rejectDuplicates && original !== undefined
          ? { errorCode: DUPLICATE_ERROR_CODE, errorDetail: `The document duplicates document ${original}.` }
          : undefined;
      if (contentKey !== undefined && original === undefined) firstByContent.set(contentKey, identifier);
      const at = now.toISOString();
      const document: MockDocument = {
        extractor: input.documentType ?? 'invoice',
        meta: {
          identifier,
          customIdentifier: input.customIdentifier,
          fileName: input.fileName,
          ready: true,
          readyDt: at,
          failed: error !== undefined,
          expiryTime: input.expiryTime,
          language: input.language,
          documentType: input.documentType,
          collection: input.collection === null ? null : { identifier: input.collection },
          workspace: input.workspace === null ? null : { identifier: input.workspace },
          createdDt: at,
          errorCode: error?.errorCode ?? null,
          errorDetail: error?.errorDetail ?? null,
          isArchived: false,
          isConfirmed: false,
          isRejected: false,
          sourceEmail: null,
          sourceEmailAddress: null,
        },
        data: {},
        warnings: [],
        ...(error ? { error } : {}),
      };
      documents.set(identifier, document);
      return document;
    },
    list(filter) {
      return [...documents.values()].filter(
        (document) =>
          (filter.customIdentifier === undefined ||
            document.meta.customIdentifier === filter.customIdentifier) &&
          (filter.ready === undefined || document.meta.ready === filter.ready) &&
          (filter.failed === undefined || document.meta.failed === filter.failed),
      );
    },
  };
}

/** What `wait=false` answers (201): the document as it is before processing has finished. */
export function pendingView(document: MockDocument): MockDocument {
  const { error: _error, ...rest } = document;
  return {
    ...rest,
    data: {},
    meta: {
      ...document.meta,
      ready: false,
      readyDt: null,
      failed: false,
      errorCode: null,
      errorDetail: null,
    },
  };
}

/** Eight url-safe characters, like the service's identifiers. */
function newIdentifier(taken: ReadonlyMap<string, unknown>): string {
  for (;;) {
    const candidate = randomBytes(6).toString('base64url');
    if (!taken.has(candidate)) return candidate;
  }
}
