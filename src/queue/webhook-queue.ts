import { Queue } from 'bullmq';
import type { KeySpace } from '../record/keys.ts';
import type { RedisClient } from '../redis/connections.ts';

/** BullMQ queue name; its keys are `<prefix>:{queue}:webhooks:…`. */
export const webhookQueueName = 'webhooks';

/** The events the gateway announces (README, "Webhooks"). */
export const gatewayEvents = [
  'message.accepted',
  'message.refused',
  'message.held',
  'message.released',
  'document.uploaded',
  'document.rejected',
  'document.failed',
  'document.parsed',
  'document.parse_failed',
] as const;
export type GatewayEventName = (typeof gatewayEvents)[number];

/** One event as receivers get it: the body of every delivery, whatever the receiver. */
export interface GatewayEvent {
  /** Stable across retries and repeats of the fact it announces: receivers dedupe by it. */
  id: string;
  event: GatewayEventName;
  /** ISO 8601, when the gateway learnt the fact. */
  timestamp: string;
  payload: Readonly<Record<string, unknown>>;
}

/**
 * One delivery: one event to one receiver. Holds the receiver's URL, never its secret: the
 * worker looks the secret up in the configuration in force when it posts.
 */
export interface WebhookJobData {
  url: string;
  event: GatewayEvent;
}

export interface WebhookQueueOptions {
  connection: RedisClient;
  keys: KeySpace;
  /** Tries per delivery, the first included (webhook-backoff.ts spreads them over events.retryFor). */
  attempts: number;
  /** retention: seconds finished deliveries are kept. */
  retention: { completedJobs: number; failedJobs: number };
}

export function createWebhookQueue(options: WebhookQueueOptions): Queue<WebhookJobData> {
  return new Queue<WebhookJobData>(webhookQueueName, {
    connection: options.connection,
    prefix: options.keys.queuePrefix,
    defaultJobOptions: {
      attempts: options.attempts,
      // The delay comes from the webhook worker's backoff strategy (webhook-backoff.ts).
      backoff: { type: 'webhook' },
      // A kept delivery makes a repeated announcement of the same event to the same receiver a
      // no-op; failed ones stay listable and retryable (GET /v1/webhooks/deliveries?state=failed).
      removeOnComplete: { age: options.retention.completedJobs },
      removeOnFail: { age: options.retention.failedJobs },
    },
  });
}
