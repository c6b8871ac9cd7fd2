import { fileRoutes, type GatewayConfig, type WorkspaceConfig } from '../config/schema.ts';
import { asError } from '../errors.ts';
import { smimeKeySource } from '../intake/smime-keys.ts';
import type { Logger } from '../logger.ts';
import { announcingRefusals } from '../queue/refusal-events.ts';
import { createAllowedSenders } from '../record/allowed-senders.ts';
import { createRefusalLog, type RefusalLog } from '../record/refusal-log.ts';
import { createSmtpIntake, type SmtpIntake } from '../smtp/create-smtp-server.ts';
import { createRateLimiter } from '../smtp/rate-limit.ts';
import { loadStartTlsOptions, type StartTlsOptions } from '../smtp/tls-options.ts';
import { createAdmissionRoutes } from './admission-routes.ts';
import { noticeTrigger } from './notice-role.ts';
import { openReceiver } from './open-receiver.ts';
import type { RoleContext } from './role-context.ts';
import { webhookAnnouncer } from './webhook-announcer.ts';

/**
 * The SMTP role: the upload queue and the producer that commits to it, the DATA use case,
 * and the listener, registered on the lifecycle so the listener closes first and the queue
 * after it. Routes are read from the table in force at each RCPT, so a reload applies to the
 * next transaction; the table adds the senders allowed at releases (admission-routes.ts).
 */
export async function startIntakeRole(
  context: RoleContext,
  /** The workspaces routed now: the file's, and with discovery the service's. */
  routedWorkspaces: () => readonly WorkspaceConfig[],
  /** Base URL of the record API, for the sourceEmail links. */
  publicUrl: string,
): Promise<{ smtp: SmtpIntake; port: number }> {
  const { config, lifecycle, logger, keys, ledger, index, intakeRedis, durability, metrics, outage } =
    context;
  // A message is committed on the intake connection and queued on the queue connection: one
  // still reconnecting after a Redis restart refuses it (451).
  context.connections.need('intake', intakeRedis);
  context.connections.need('queue', context.queueRedis);
  warnForgeable(config, logger);
  const notices = noticeTrigger(context, context.queues);
  await warnUnusableSmimeKeys(config, logger);
  const admission = await createAdmissionRoutes(
    context.settings,
    routedWorkspaces,
    createAllowedSenders(intakeRedis, keys),
  );
  const routeTable = admission.table;
  const receive = await openReceiver({
    readmit: admission.readmit,
    config,
    intakeRedis,
    queueRedis: context.queueRedis,
    queue: context.queues.uploads,
    keys,
    ledger,
    index,
    durability,
    publicUrl,
    logger,
    metrics,
    ...(context.resolver ? { resolver: context.resolver } : {}),
    ...(config.events.webhooks.length > 0
      ? { announcer: webhookAnnouncer(context, context.queues, publicUrl) }
      : {}),
    ...(notices ? { notices } : {}),
  });
  const tls = await loadStartTlsOptions(config.smtp.tls);
  const smtp = createSmtpIntake({
    settings: config.smtp,
    routes: {
      lookup: (recipient) => routeTable().route(recipient),
      isPostmaster: (recipient) => routeTable().isPostmaster(recipient),
    },
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
      refusedRecipientWindow: config.smtp.refusedRecipientWindow,
      logger,
      metrics,
    }),
    tls,
    refusalLog: refusalLogOf(
      context,
      publicUrl,
      (recipient) => routeTable().route(recipient)?.config.identifier ?? null,
    ),
  });
  reloadStartTls(context, smtp, tls);
  const { port } = await lifecycle.start('smtp', smtp);
  return { smtp, port };
}

/** The refusal log, announcing `message.refused` to the webhooks when any are configured. */
function refusalLogOf(
  context: RoleContext,
  publicUrl: string,
  workspaceOf: (recipient: string) => string | null,
): RefusalLog {
  const { config, intakeRedis, keys, logger } = context;
  const log = createRefusalLog({
    redis: intakeRedis,
    keys,
    retentionSeconds: config.retention.refusals,
    maxEntries: config.retention.maxRefusals,
    logger,
  });
  if (config.events.webhooks.length === 0) return log;
  return announcingRefusals({
    log,
    announcer: webhookAnnouncer(context, context.queues, publicUrl),
    workspaceOf,
    logger,
  });
}

/**
 * At each reload, reads the STARTTLS key and certificate again (a renewed certificate) and
 * puts them in force for the next handshakes. A pair that does not load is logged and the
 * running one stays; the same bytes change nothing. Offering STARTTLS or not is decided at
 * the start (smtp.tls set or not): it changes at the next start.
 */
function reloadStartTls(context: RoleContext, smtp: SmtpIntake, initial: StartTlsOptions | null): void {
  const log = context.logger.child({ component: 'smtp' });
  let current = initial;
  // One load at a time, in the order of the reloads.
  let loading = Promise.resolve();
  context.settings.onChange(({ config }) => {
    loading = loading
      .then(async () => {
        const tls = config.smtp.tls;
        if (tls === undefined || current === null) {
          if ((tls === undefined) !== (current === null)) {
            log.warn('smtp.tls was added or removed: STARTTLS is offered or withdrawn at the next start');
          }
          return;
        }
        let next: StartTlsOptions | null;
        try {
          next = await loadStartTlsOptions(tls);
        } catch (err) {
          log.error(
            { err: asError(err) },
            'STARTTLS key and certificate not reloaded; the running ones stay',
          );
          return;
        }
        if (next === null || (next.key.equals(current.key) && next.cert.equals(current.cert))) return;
        smtp.replaceTls(next);
        current = next;
        log.info({ cert: tls.cert }, 'STARTTLS key and certificate reloaded');
      })
      .catch((err: unknown) => log.error({ err: asError(err) }, 'STARTTLS key and certificate not applied'));
  });
}

/**
 * S/MIME keys that cannot be used (a file missing, not PEM, a key of another certificate), said
 * at the start rather than first in a skipped part's reason. Files and workspaces are named,
 * never their content; the keys are read again for each encrypted message, so a fix needs no
 * restart.
 */
async function warnUnusableSmimeKeys(config: GatewayConfig, logger: Logger): Promise<void> {
  const keys = smimeKeySource(config.workspaces);
  if (keys === null) return;
  const { problems } = await keys();
  if (problems.length === 0) return;
  logger.warn(
    { problems },
    'S/MIME keys that cannot be used: encrypted mail to these workspaces is skipped (encrypted_smime)',
  );
}

/** Allow-lists that check a From nobody authenticated: anyone can write an allowed address. */
function warnForgeable(config: GatewayConfig, logger: Logger): void {
  const forgeable = fileRoutes(config)
    .filter((ws) => (ws.whitelistIngestAddresses ?? []).length > 0)
    .filter((ws) => (ws.senderAuthentication ?? config.auth.senderAuthentication) === 'off')
    .map((ws) => ws.identifier);
  if (forgeable.length === 0) return;
  logger.warn(
    { workspaces: forgeable },
    'allow-lists without sender authentication: anyone can forge an allowed From; set auth.senderAuthentication: aligned',
  );
}
