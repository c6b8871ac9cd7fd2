import type { Queue } from 'bullmq';
import * as z from 'zod/mini';
import { gatewayEvents, type WebhookJobData } from '../queue/webhook-queue.ts';

/** One webhook delivery given up, as an operator needs to judge and retry it. */
export const failedDeliverySchema = z.object({
  id: z.string().check(z.describe('The delivery: <event id>-<receiver>')),
  eventId: z.string().check(z.describe('The event id the receiver dedupes by')),
  event: z.enum(gatewayEvents),
  receiver: z.string().check(z.describe("The receiver's origin (scheme, host and port)")),
  messageId: z.nullable(z.string()),
  reason: z.string().check(z.describe('The last attempt’s failure: the HTTP status, or why no answer came')),
  attempts: z.int().check(z.gte(0)),
  failedAt: z.nullable(z.iso.datetime()),
});
export type FailedDelivery = z.output<typeof failedDeliverySchema>;

export const failedDeliveryListSchema = z.object({ deliveries: z.array(failedDeliverySchema) });

/**
 * The deliveries given up (kept for retention.failedJobs), and their retry: back in the
 * queue with fresh attempts, so the whole schedule (events.retryFor) runs again.
 */
export function createFailedDeliveries(queue: () => Queue<WebhookJobData>) {
  return {
    async list(): Promise<FailedDelivery[]> {
      const jobs = await queue().getFailed(0, -1);
      return jobs.map((job) => ({
        id: String(job.id),
        eventId: job.data.event.id,
        event: job.data.event.event,
        receiver: URL.parse(job.data.url)?.origin ?? '',
        messageId:
          typeof job.data.event.payload.messageId === 'string' ? job.data.event.payload.messageId : null,
        reason: job.failedReason ?? '',
        attempts: job.attemptsMade,
        failedAt: job.finishedOn ? new Date(job.finishedOn).toISOString() : null,
      }));
    },
    /** True when the delivery was failed and is queued again; false when no failed delivery has this id. */
    async retry(id: string): Promise<boolean> {
      const job = await queue().getJob(id);
      if (!job || !(await job.isFailed())) return false;
      await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
      return true;
    },
  };
}

export type FailedDeliveries = ReturnType<typeof createFailedDeliveries>;
