import { randomBytes } from 'node:crypto';
import type { DocumentError, DocumentWarning } from './process-document.ts';

/**
 * The documents the mock holds, by identifier, in the service's camelCase shape with its
 * state flags (README.md, "Resources"). A document is created pending (`ready: false`, empty
 * `data`), which is what a `wait=false` upload is answered with, and finished once its
 * processing is done (parse-runner.ts): ready, with `readyDt`, and `failed` with `error`
 * (mirrored in `meta.errorCode/errorDetail`) or `warnings` as the outcome says.
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
  /** The document this one was split from; null for an uploaded document. */
  parentDocument: DocumentReference | null;
  /** The documents a workspace's splitter made of this one (parse-runner.ts); empty when none. */
  childDocuments: DocumentReference[];
}

export interface DocumentReference {
  identifier: string;
  customIdentifier: string | null;
}

export interface MockDocument {
  extractor: string;
  meta: MockDocumentMeta;
  /** The parse result; the mock extracts nothing, so it is always empty. */
  data: Record<string, unknown>;
  error?: DocumentError;
  warnings: DocumentWarning[];
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
  /** The document it was split from; absent for an upload. */
  parentDocument?: DocumentReference;
}

export interface DocumentFilter {
  customIdentifier?: string;
  ready?: boolean;
  failed?: boolean;
}

/** How processing ended, as the document shows it. */
export type DocumentResult = { error: DocumentError } | { warnings: DocumentWarning[] };

export interface DocumentStore {
  readonly documents: ReadonlyMap<string, MockDocument>;
  /** Stores a new, pending document. */
  create(input: NewDocument, now: Date): MockDocument;
  /** Marks the document ready with its result. */
  finish(document: MockDocument, result: DocumentResult, now: Date): void;
  /** Forgets a document (`deleteAfterParse`): reads answer 404 from then on. */
  remove(identifier: string): void;
  /** The first document kept of these bytes in this workspace, for `rejectDuplicates`. */
  findByContent(workspace: string | null, sha256: string): string | undefined;
  /** Makes the document the original of its bytes in its workspace, unless one already is. */
  rememberContent(document: MockDocument, sha256: string): void;
  list(filter: DocumentFilter): MockDocument[];
}

export function createDocumentStore(): DocumentStore {
  const documents = new Map<string, MockDocument>();
  /** `${workspace}\n${sha256}` → identifier of the first document of those bytes. */
  const firstByContent = new Map<string, string>();
  const contentKey = (workspace: string | null, sha256: string) => `${workspace ?? ''}\n${sha256}`;

  return {
    documents,
    create(input, now) {
      const identifier = newIdentifier(documents);
      const document: MockDocument = {
        extractor: input.documentType ?? 'invoice',
        meta: {
          identifier,
          customIdentifier: input.customIdentifier,
          fileName: input.fileName,
          ready: false,
          readyDt: null,
          failed: false,
          expiryTime: input.expiryTime,
          language: input.language,
          documentType: input.documentType,
          collection: input.collection === null ? null : { identifier: input.collection },
          workspace: input.workspace === null ? null : { identifier: input.workspace },
          createdDt: now.toISOString(),
          errorCode: null,
          errorDetail: null,
          isArchived: false,
          isConfirmed: false,
          isRejected: false,
          sourceEmail: null,
          sourceEmailAddress: null,
          parentDocument: input.parentDocument ?? null,
          childDocuments: [],
        },
        data: {},
        warnings: [],
      };
      documents.set(identifier, document);
      return document;
    },
    finish(document, result, now) {
      const { meta } = document;
      meta.ready = true;
      meta.readyDt = now.toISOString();
      if ('error' in result) {
        meta.failed = true;
        meta.errorCode = result.error.errorCode;
        meta.errorDetail = result.error.errorDetail;
        document.error = { ...result.error };
      } else {
        document.warnings = result.warnings.map((warning) => ({ ...warning }));
      }
    },
    remove(identifier) {
      documents.delete(identifier);
    },
    findByContent(workspace, sha256) {
      return firstByContent.get(contentKey(workspace, sha256));
    },
    rememberContent(document, sha256) {
      const key = contentKey(document.meta.workspace?.identifier ?? null, sha256);
      if (!firstByContent.has(key)) firstByContent.set(key, document.meta.identifier);
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

/** Eight url-safe characters, like the service's identifiers. */
function newIdentifier(taken: ReadonlyMap<string, unknown>): string {
  for (;;) {
    const candidate = randomBytes(6).toString('base64url');
    if (!taken.has(candidate)) return candidate;
  }
}
