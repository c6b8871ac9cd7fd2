import type { GatewayConfig } from '../config/schema.ts';
import { createNoticeTrigger, notifySenderOf } from '../notices/notice-trigger.ts';
import { createSenderRate } from '../notices/sender-rate.ts';
import type { NoticeTrigger } from '../queue/notice-queue.ts';
import type { Queues } from '../queue/queues.ts';
import { webhookAttempts } from '../queue/webhook-backoff.ts';
import { closeConnection, createWorkerConnection } from '../redis/connections.ts';
import type { RoleContext } from './role-context.ts';

/** Whether any notice can go out: a relay, and a workspace that notifies. */
function noticesOn(config: GatewayConfig): boolean {
  return (
    config.notices.smtp !== undefined &&
    config.workspaces.some((workspace) => (workspace.notifySender ?? 'never') !== 'never')
  );
}

/** Tries per notice: as many as fit in notices.retryFor on its schedule. */
export function noticeAttempts(config: GatewayConfig): number {
  const { retryBaseDelay, retryMaxDelay, retryFor } = config.notices;
  return webhookAttempts({ baseMs: retryBaseDelay, capMs: retryMaxDelay, windowMs: retryFor });
}

/**
 * What a role tells of held messages and settled documents, queueing their notices on
 * `queues`; undefined when no notice can go out. Reads the workspaces in force, so a reload
 * that changes notifySender applies to the next message. Loads no mail client.
 */
export function noticeTrigger(context: RoleContext, queues: Queues): NoticeTrigger | undefined {
  if (!noticesOn(context.config)) return undefined;
  return createNoticeTrigger({
    queue: () => queues.notices,
    ledger: context.ledger,
    modeOf: (workspace) => notifySenderOf(context.settings.current().config.workspaces)(workspace),
  });
}

/**
 * The worker role's notice sender, on a connection of its own, closed before the queues.
 * nodemailer's transport is loaded here, on demand: a worker without notices, and the SMTP
 * role always, do without it.
 */
export async function startNotices(context: RoleContext): Promise<void> {
  const { config, settings, lifecycle, logger, metrics, keys, outage, redis } = context;
  const relayUrl = config.notices.smtp;
  const from = config.notices.from;
  if (!noticesOn(config) || relayUrl === undefined || from === undefined) return;
  const { createNoticeWorker } = await import('../notices/notice-worker.ts');
  const connection = createWorkerConnection(redis, outage, 'notices');
  lifecycle.onClose('notice redis', () => closeConnection(connection));
  context.connections.need('notices', connection);
  const worker = createNoticeWorker({
    connection,
    redis: context.intakeRedis,
    keys,
    ledger: context.ledger,
    rate: createSenderRate(context.intakeRedis, keys),
    relayUrl,
    from,
    envelopeFrom: config.notices.envelopeFrom,
    schedule: { baseMs: config.notices.retryBaseDelay, capMs: config.notices.retryMaxDelay },
    timeoutMs: config.notices.timeout,
    clientName: config.smtp.hostname,
    modeOf: (workspace) => notifySenderOf(settings.current().config.workspaces)(workspace),
    metrics,
    logger,
    outage,
  });
  await lifecycle.start('notice worker', worker);
}
