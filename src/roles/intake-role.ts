import type { Queue } from 'bullmq';
import type { GatewayConfig } from '../config/schema.ts';
import { createMessageReceiver } from '../intake/receive-message.ts';
import type { RouteTable } from '../intake/route-table.ts';
import type { Logger } from '../logger.ts';
import { createProducer } from '../queue/producer.ts';
import { createUploadQueue, type UploadJobData } from '../queue/upload-queue.ts';
import { createSenderAuthenticator } from '../sender/authenticate-sender.ts';
import { createDnsResolver } from '../sender/dns-resolver.ts';
import { createSmtpIntake, type SmtpIntake } from '../smtp/create-smtp-server.ts';
import { createRateLimiter } from '../smtp/rate-limit.ts';
import { loadStartTlsOptions } from '../smtp/tls-options.ts';
import type { RoleContext } from './role-context.ts';

/**
 * The SMTP role: the upload queue and the producer that commits to it, the DATA use case,
 * and the listener, registered on the lifecycle so the listener closes first and the queue
 * after it. Routes are read from the table in force at each RCPT, so a reload applies to the
 * next transaction.
 */
export async function startIntakeRole(
  context: RoleContext,
  routeTable: () => RouteTable<GatewayConfig['workspaces'][number]>,
  /** Base URL of the record API, for the sourceEmail links. */
  publicUrl: string,
): Promise<{ smtp: SmtpIntake; port: number }> {
  const { config, lifecycle, logger, keys, ledger, index, intakeRedis, durability, metrics, outage } =
    context;
  const queue: Queue<UploadJobData> = createUploadQueue({
    connection: context.queueRedis,
    keys,
    attempts: config.upload.attempts,
    retention: config.retention,
  });
  queue.on('error', (err) => outage.absorbs(err) || logger.error({ err }, 'upload queue error'));
  lifecycle.onClose('upload queue', () => queue.close());
  const producer = createProducer({
    redis: intakeRedis,
    keys,
    queue,
    queueRedis: context.queueRedis,
    ledger,
    index,
    logger,
    messageTtlSeconds: config.retention.messages,
    waitAofTimeout: durability.waitAof ? config.redis.waitAofTimeout : null,
  });
  warnForgeable(config, logger);
  const receive = createMessageReceiver({
    limits: config.smtp,
    auth: config.auth,
    redis: intakeRedis,
    keys,
    producer,
    publicUrl,
    authenticator: createSenderAuthenticator({
      resolver: context.resolver ?? createDnsResolver(config.dns),
      hostname: config.smtp.hostname,
    }),
    metrics,
    logger,
  });
  const smtp = createSmtpIntake({
    settings: config.smtp,
    routes: { lookup: (recipient) => routeTable().route(recipient) },
    receive,
    logger,
    onOutcome: (outcome, code) => {
      metrics.smtpMessages.inc({ outcome, code: String(code) });
      // A transaction that failed inside while Redis is away counts toward the outage's lines.
      if (outcome === 'failed') outage.countRefused();
    },
    metrics,
    rateLimiter: createRateLimiter({
      redis: intakeRedis,
      prefix: config.redis.prefix,
      limits: config.smtp.rateLimit,
      logger,
      metrics,
    }),
    tls: await loadStartTlsOptions(config.smtp.tls),
  });
  const { port } = await lifecycle.start('smtp', smtp);
  return { smtp, port };
}

/** Allow-lists that check a From nobody authenticated: anyone can write an allowed address. */
function warnForgeable(config: GatewayConfig, logger: Logger): void {
  const forgeable = config.workspaces
    .filter((ws) => (ws.whitelistIngestAddresses ?? []).length > 0)
    .filter((ws) => (ws.senderAuthentication ?? config.auth.senderAuthentication) === 'off')
    .map((ws) => ws.identifier);
  if (forgeable.length === 0) return;
  logger.warn(
    { workspaces: forgeable },
    'allow-lists without sender authentication: anyone can forge an allowed From; set auth.senderAuthentication: aligned',
  );
}
