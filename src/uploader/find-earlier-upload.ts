import type { ApiResult } from '../parsing-api/api-result.ts';
import { type Document, documentSchema } from '../parsing-api/document-schema.ts';

/**
 * What a lookup by customIdentifier found (pure): the document an earlier attempt created,
 * none, or no answer to rely on (then the worker must not upload blindly: it retries later).
 * The service lists documents as `{results: [...]}` (paged) or, tolerated, a bare array.
 */
export type EarlierUpload = { found: Document } | { found: null } | { unknown: string };

export function findEarlierUpload(
  result: ApiResult,
  customIdentifier: string,
  workspace: string,
): EarlierUpload {
  if (result.kind === 'network') return { unknown: `document lookup failed: ${result.error.message}` };
  if (result.status < 200 || result.status >= 300)
    return { unknown: `document lookup answered HTTP ${result.status}` };
  const body = result.body;
  const list = Array.isArray(body)
    ? body
    : body && typeof body === 'object' && 'results' in body
      ? body.results
      : undefined;
  if (!Array.isArray(list)) return { unknown: 'document lookup answered something other than a list' };
  for (const item of list) {
    const parsed = documentSchema.safeParse(item);
    if (!parsed.success) continue;
    const meta = parsed.data.meta;
    if (meta.customIdentifier !== customIdentifier) continue;
    // A document of another workspace with the same identifier is not this upload's.
    const owner = meta.workspace?.identifier;
    if (owner !== undefined && owner !== null && owner !== workspace) continue;
    return { found: parsed.data };
  }
  return { found: null };
}
