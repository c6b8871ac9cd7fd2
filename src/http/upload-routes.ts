import type { ServerResponse } from 'node:http';
import * as z from 'zod/mini';
import type { FailedUploads } from '../uploader/failed-uploads.ts';
import { queryProblems } from './query-problems.ts';
import { json, refuse } from './respond.ts';

/** The query of GET /v1/uploads: one state, the only one listed. */
export const uploadQueryParameters = z.strictObject({
  state: z._default(
    z
      .literal('failed', {
        error: (issue) => `only failed uploads are listed (state=failed), not ${String(issue.input)}`,
      })
      .check(z.describe('Which uploads: only the failed ones are listed')),
    'failed',
  ),
});

/** GET /v1/uploads?state=failed: the failed uploads, as `ingest-gateway failed list` shows them. */
export async function listUploads(
  res: ServerResponse,
  params: URLSearchParams,
  failed: FailedUploads,
): Promise<void> {
  // The first of a repeated parameter counts, as URLSearchParams.get reads it.
  const raw: Record<string, string> = {};
  for (const [name, value] of params) raw[name] ??= value;
  const parsed = uploadQueryParameters.safeParse(raw);
  if (!parsed.success) return refuse(res, 400, 'bad query', queryProblems(parsed.error.issues));
  json(res, 200, { uploads: await failed.list() });
}

/**
 * POST /v1/uploads/{jobId}/retry: 200 when the job is back in the queue; 404 when it is no
 * failed upload; 409 when its stored attachment has expired, so nothing could be uploaded.
 */
export async function retryUpload(res: ServerResponse, jobId: string, failed: FailedUploads): Promise<void> {
  const outcome = await failed.retry([jobId]);
  const refusal = outcome.refused[0];
  if (refusal === undefined) return json(res, 200, outcome);
  const status = refusal.reason === 'not a failed upload' ? 404 : 409;
  refuse(res, status, `upload ${jobId} not retried: ${refusal.reason}`);
}

/** POST /v1/uploads/retry: every failed upload back in the queue, but those whose attachment expired. */
export async function retryAllUploads(res: ServerResponse, failed: FailedUploads): Promise<void> {
  json(res, 200, await failed.retry('all'));
}
