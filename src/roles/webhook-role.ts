import type { EventAnnouncer } from '../queue/announce-events.ts';
import type { Queues } from '../queue/queues.ts';
import { closeConnection, createWorkerConnection } from '../redis/connections.ts';
import { webhookSchedule } from '../webhooks/webhook-settings-schema.ts';
import { createWebhookWorker } from '../webhooks/webhook-worker.ts';
import type { RoleContext } from './role-context.ts';
import { webhookAnnouncer } from './webhook-announcer.ts';

/**
 * The worker role's webhook deliveries (events.webhooks): the worker posting them, on the
 * worker's queue connection, and the announcer the upload worker tells each final state.
 * Nothing when no receiver is configured. The delivery worker closes before the queues.
 */
export async function startWebhooks(
  context: RoleContext,
  queues: Queues,
  publicUrl: string,
): Promise<EventAnnouncer | undefined> {
  const { config, settings, lifecycle, logger, metrics, keys, outage, redis } = context;
  if (config.events.webhooks.length === 0) return undefined;
  const schedule = webhookSchedule(config.events);
  const connection = createWorkerConnection(redis, outage, 'webhooks');
  lifecycle.onClose('webhook redis', () => closeConnection(connection));
  context.connections.need('webhooks', connection);
  const deliveries = createWebhookWorker({
    connection,
    keys,
    schedule,
    timeoutMs: config.events.timeout,
    secretFor: (url) => settings.current().config.events.webhooks.find((hook) => hook.url === url)?.secret,
    metrics,
    logger,
    outage,
  });
  await lifecycle.start('webhook worker', deliveries);
  return webhookAnnouncer(context, queues, publicUrl);
}
