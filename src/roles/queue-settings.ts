import type { GatewayConfig } from '../config/schema.ts';
import type { QueuesOptions } from '../queue/queues.ts';
import { webhookAttempts } from '../queue/webhook-backoff.ts';
import { webhookSchedule } from '../webhooks/webhook-settings-schema.ts';
import { noticeAttempts } from './notice-role.ts';

/**
 * What the queues are opened with from the configuration, the same in every process that
 * opens them: the upload queue's attempts and retention, and the tries per webhook delivery
 * and per sender notice, each from its section's retry schedule.
 */
export function queueSettings(
  config: GatewayConfig,
): Pick<QueuesOptions, 'attempts' | 'retention' | 'webhookAttempts' | 'noticeAttempts'> {
  return {
    attempts: config.upload.attempts,
    retention: config.retention,
    webhookAttempts: webhookAttempts(webhookSchedule(config.events)),
    noticeAttempts: noticeAttempts(config),
  };
}
