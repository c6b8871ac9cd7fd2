import * as z from 'zod/mini';

/**
 * The response bodies of the parsing API that the uploader reads: the Document parse result
 * (docs/parsing-api.md, "The Document") and the RequestError of failed requests ("RequestError").
 *
 * Tolerant by design: unknown fields are stripped, and every field the spec does not mark
 * required may be absent or null (an OpenAPI-generated server writes `null` for unset
 * fields). Only `meta.identifier` is insisted on, because it is the one thing the gateway
 * records: a created document without it cannot be traced. `extractor` is required by the
 * spec but optional here, since refusing a body that has an identifier would mark an upload
 * failed that the service in fact accepted. Both casings are read (see documentSchema).
 */

const isoDateTime = z.string();

const documentReferenceSchema = z.object({
  identifier: z.nullish(z.string()),
  customIdentifier: z.nullish(z.string()),
});

export const documentWarningSchema = z.object({
  warningCode: z.string(),
  warningDetail: z.nullish(z.string()),
});

export const documentErrorSchema = z.object({
  errorCode: z.string(),
  errorDetail: z.nullish(z.string()),
});

export const documentMetaSchema = z.object({
  identifier: z.string().check(z.minLength(1)),
  customIdentifier: z.nullish(z.string()),
  fileName: z.nullish(z.string()),
  ready: z.nullish(z.boolean()),
  readyDt: z.nullish(isoDateTime),
  failed: z.nullish(z.boolean()),
  expiryTime: z.nullish(isoDateTime),
  language: z.nullish(z.string()),
  pdf: z.nullish(z.string()),
  parentDocument: z.nullish(documentReferenceSchema),
  childDocuments: z.nullish(z.array(documentReferenceSchema)),
  isOcrd: z.nullish(z.boolean()),
  ocrConfidence: z.nullish(z.number()),
  reviewUrl: z.nullish(z.string()),
  documentType: z.nullish(z.string()),
  collection: z.nullish(z.object({ identifier: z.nullish(z.string()), name: z.nullish(z.string()) })),
  workspace: z.nullish(z.object({ identifier: z.nullish(z.string()), name: z.nullish(z.string()) })),
  createdDt: z.nullish(isoDateTime),
  archivedDt: z.nullish(isoDateTime),
  confirmedDt: z.nullish(isoDateTime),
  rejectedDt: z.nullish(isoDateTime),
  isArchived: z.nullish(z.boolean()),
  isConfirmed: z.nullish(z.boolean()),
  isRejected: z.nullish(z.boolean()),
  skipParse: z.nullish(z.boolean()),
  errorCode: z.nullish(z.string()),
  errorDetail: z.nullish(z.string()),
  file: z.nullish(z.string()),
  sourceEmail: z.nullish(z.string()),
  sourceEmailAddress: z.nullish(z.string()),
});

const documentCamelSchema = z.object({
  extractor: z.nullish(z.string()),
  meta: documentMetaSchema,
  // The parse result itself; the gateway never looks inside it.
  data: z.nullish(z.record(z.string(), z.unknown())),
  error: z.nullish(documentErrorSchema),
  warnings: z.nullish(z.array(documentWarningSchema)),
});

/**
 * The Document in either casing: with `?snake_case=true` (docs/parsing-api.md) the service
 * writes `ready_dt`, `error_code`, `warning_detail`. Keys are turned back into camelCase
 * before validation, so there is one schema and one type; camelCase keys pass unchanged.
 * `data`, the parse result, is left as it is: the gateway never reads it.
 */
export const documentSchema = z.pipe(z.transform(camelizeDocument), documentCamelSchema);

function camelizeDocument(body: unknown): unknown {
  if (!isPlainObject(body)) return body;
  return Object.fromEntries(
    Object.entries(body).map(([key, value]) => [camelKey(key), key === 'data' ? value : camelizeKeys(value)]),
  );
}

/** Every key of objects and of objects in arrays, recursively, in camelCase. */
export function camelizeKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(camelizeKeys);
  if (!isPlainObject(value)) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [camelKey(key), camelizeKeys(inner)]),
  );
}

/** `ready_dt` → `readyDt`, `is_ocrd` → `isOcrd`; a key without `_` stays as it is. */
export function camelKey(key: string): string {
  return key.replace(/_+([a-z0-9])/g, (_match, letter: string) => letter.toUpperCase());
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The Document of a 2xx body, in either casing; null when the body is not one. */
export function parseDocument(body: unknown): Document | null {
  const parsed = documentSchema.safeParse(body);
  return parsed.success ? parsed.data : null;
}

export const requestErrorItemSchema = z.object({
  attr: z.nullish(z.string()),
  code: z.string(),
  detail: z.string(),
});

/** `{"type": "validation_error", "errors": [{"attr": "file" | null, "code": "invalid", "detail": "…"}]}` */
export const requestErrorSchema = z.object({
  type: z.string(),
  errors: z.array(requestErrorItemSchema),
});

export type DocumentWarning = z.infer<typeof documentWarningSchema>;
export type DocumentError = z.infer<typeof documentErrorSchema>;
export type DocumentMeta = z.infer<typeof documentMetaSchema>;
export type Document = z.output<typeof documentCamelSchema>;
export type RequestErrorItem = z.infer<typeof requestErrorItemSchema>;
export type RequestError = z.infer<typeof requestErrorSchema>;
