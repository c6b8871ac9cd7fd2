import { countPdfPages, hasPdfEndMarker, isZipIntact } from './inspect-file.ts';
import { type RequestErrorBody, validationError } from './request-error.ts';
import type { TypeCheck } from './supported-type.ts';
import type { WorkspaceSettings } from './workspace-shape.ts';

/**
 * What the service's processing makes of an accepted upload (README.md, "Processing"):
 * parsed, parsed with a warning, failed, or rejected without a credit, or not a document at
 * all (a 400). Pure: the bytes' facts and the settings in, the outcome out;
 * handle-upload.ts does the I/O and parse-runner.ts applies the outcome.
 */

/** The service parses only the first 10 pages of a longer file, with the warning `too_many_pages`. */
export const MAX_PARSED_PAGES = 10;

/**
 * The error code of a rejected duplicate. The service does not publish it (its public
 * description only says that parsing fails and costs no credit); this name is the mock's,
 * and a client must not depend on it.
 */
export const DUPLICATE_ERROR_CODE = 'duplicate_document';
/** The mock's code for a file rejected under `rejectInvalidDocuments`; the service publishes none. */
export const INVALID_DOCUMENT_ERROR_CODE = 'invalid_document_type';
/** The service's own code for a file it could not convert, the one error code it publishes. */
export const CONVERSION_FAILED_ERROR_CODE = 'document_conversion_failed';
export const TOO_MANY_PAGES_WARNING_CODE = 'too_many_pages';

export interface ParseSettings {
  rejectDuplicates: boolean;
  rejectInvalidDocuments: boolean;
}

/**
 * The upload's `rejectDuplicates` when it gives one, else the workspace's, as the service
 * documents the field; an unknown workspace or a null setting rejects nothing.
 */
export function resolveParseSettings(
  uploadRejectDuplicates: boolean | undefined,
  workspace: WorkspaceSettings | undefined,
): ParseSettings {
  return {
    rejectDuplicates: uploadRejectDuplicates ?? workspace?.rejectDuplicates ?? false,
    rejectInvalidDocuments: workspace?.rejectInvalidDocuments ?? false,
  };
}

export type ParseInput =
  /** An upload by `url`: the mock does not download, so there is nothing to inspect. */
  | { kind: 'url' }
  | {
      kind: 'file';
      bytes: Buffer;
      type: TypeCheck;
      /** The identifier of an earlier document of the same bytes in the workspace. */
      duplicateOf: string | undefined;
    };

export interface DocumentError {
  errorCode: string;
  errorDetail: string;
}

export interface DocumentWarning {
  warningCode: string;
  warningDetail: string;
}

export type ParseOutcome =
  /** No document: the request is answered 400 with this body. */
  | { state: 'refused'; error: RequestErrorBody }
  /** A failed document that costs no credit (duplicate, invalid type). */
  | { state: 'rejected'; error: DocumentError }
  /** A failed document the service tried to parse: it costs a credit. */
  | { state: 'failed'; error: DocumentError }
  | { state: 'parsed'; warnings: DocumentWarning[] };

export function decideParse(input: ParseInput, settings: ParseSettings): ParseOutcome {
  if (input.kind === 'url') return { state: 'parsed', warnings: [] };
  const { type } = input;
  if (!type.supported) {
    return settings.rejectInvalidDocuments
      ? { state: 'rejected', error: { errorCode: INVALID_DOCUMENT_ERROR_CODE, errorDetail: type.detail } }
      : { state: 'refused', error: validationError('file', 'invalid', type.detail) };
  }
  if (settings.rejectDuplicates && input.duplicateOf !== undefined) {
    const errorDetail = `The document duplicates document ${input.duplicateOf}.`;
    return { state: 'rejected', error: { errorCode: DUPLICATE_ERROR_CODE, errorDetail } };
  }
  const conversion = conversionProblem(input.bytes, type.type);
  if (conversion !== undefined) {
    return { state: 'failed', error: { errorCode: CONVERSION_FAILED_ERROR_CODE, errorDetail: conversion } };
  }
  const pages = type.type === 'pdf' ? countPdfPages(input.bytes) : 0;
  if (pages > MAX_PARSED_PAGES) {
    const warningDetail = `The document has ${pages} pages; only the first ${MAX_PARSED_PAGES} were parsed.`;
    return { state: 'parsed', warnings: [{ warningCode: TOO_MANY_PAGES_WARNING_CODE, warningDetail }] };
  }
  return { state: 'parsed', warnings: [] };
}

/** file-type's names of the formats that are zip archives inside. */
const ZIP_BASED = new Set(['docx', 'xlsx', 'odt']);

function conversionProblem(bytes: Buffer, type: string): string | undefined {
  if (type === 'pdf' && !hasPdfEndMarker(bytes)) {
    return 'The document could not be converted: the PDF has no %%EOF marker (it is cut short or damaged).';
  }
  if (ZIP_BASED.has(type) && !isZipIntact(bytes)) {
    return `The document could not be converted: the ${type.toUpperCase()} file is not a whole zip archive.`;
  }
  return undefined;
}
