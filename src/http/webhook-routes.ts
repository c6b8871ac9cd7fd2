import type { ServerResponse } from 'node:http';
import * as z from 'zod/mini';
import type { FailedDeliveries } from '../webhooks/failed-deliveries.ts';
import { queryProblems } from './query-problems.ts';
import { json, refuse } from './respond.ts';

/** The query of GET /v1/webhooks/deliveries: one state, the only one listed. */
export const deliveryQueryParameters = z.strictObject({
  state: z._default(
    z
      .literal('failed', {
        error: (issue) => `only failed deliveries are listed (state=failed), not ${String(issue.input)}`,
      })
      .check(z.describe('Which deliveries: only those given up are listed')),
    'failed',
  ),
});

/** GET /v1/webhooks/deliveries?state=failed: the webhook deliveries given up. */
export async function listDeliveries(
  res: ServerResponse,
  params: URLSearchParams,
  failed: FailedDeliveries,
): Promise<void> {
  const raw: Record<string, string> = {};
  for (const [name, value] of params) raw[name] ??= value;
  const parsed = deliveryQueryParameters.safeParse(raw);
  if (!parsed.success) return refuse(res, 400, 'bad query', queryProblems(parsed.error.issues));
  json(res, 200, { deliveries: await failed.list() });
}

/** POST /v1/webhooks/deliveries/{id}/retry: 200 when it is queued again; 404 when it is no failed delivery. */
export async function retryDelivery(
  res: ServerResponse,
  id: string,
  failed: FailedDeliveries,
): Promise<void> {
  if (await failed.retry(id)) return json(res, 200, { retried: [id], refused: [] });
  refuse(res, 404, `delivery ${id} not retried: not a failed delivery`);
}
