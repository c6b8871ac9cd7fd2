import { type RoutedWorkspaces, routedWorkspaces } from './config/routed-workspaces.ts';
import type { FileWorkspace, GatewayConfig } from './config/schema.ts';
import { asError } from './errors.ts';
import type { DiscoveredTable } from './intake/discovered-table.ts';
import { createDiscoveryFollower, type DiscoveryFollower } from './intake/discovery-follower.ts';
import { createLifecycle, type Lifecycle } from './lifecycle.ts';
import { createLiveSettings, type LiveSettings } from './live-settings.ts';
import type { Logger } from './logger.ts';
import { createMetrics, type GatewayMetrics } from './metrics.ts';
import { openQueues } from './queue/queues.ts';
import { createKeySpace } from './record/keys.ts';
import { createMessageIndex } from './record/message-index.ts';
import { createMessageLedger } from './record/message-ledger.ts';
import { closeConnection, createIntakeConnection, redisTarget } from './redis/connections.ts';
import type { Durability } from './redis/durability.ts';
import { createNeededConnections } from './redis/needed-connections.ts';
import { createRedisOutageLog } from './redis/outage-log.ts';
import { checkDurability } from './roles/check-durability.ts';
import { startHttpRole } from './roles/http-role.ts';
import { queueSettings } from './roles/queue-settings.ts';
import type { RoleContext, RunningSettings } from './roles/role-context.ts';
import type { DnsResolver } from './sender/dns-resolver.ts';
import type { SmtpIntake } from './smtp/create-smtp-server.ts';
import { identifiesOneUpload } from './uploader/upload-identity.ts';
import type { UploadWorkspaces } from './uploader/upload-settings-schema.ts';
import type { UploadWorker } from './uploader/upload-worker.ts';

export type Role = 'all' | 'smtp' | 'worker';

export type { RunningSettings };

export interface GatewayOptions extends RunningSettings {
  role: Role;
  logger: Logger;
  /** The Redis to use (the composition root may have started a private one). */
  redisUrl: string;
  /**
   * The process's lifecycle, on which the gateway registers its steps after those already
   * there (main's private Redis and mock API); default a lifecycle of its own.
   */
  lifecycle?: Lifecycle;
  metrics?: GatewayMetrics;
  /** Jitter source for upload retries; tests pass () => 0 so a retry follows at once. */
  random?: () => number;
  /** DNS for sender authentication; default node:dns with config.dns. Tests pass an in-memory one. */
  resolver?: DnsResolver;
}

export interface Gateway {
  readonly smtpPort: number | null;
  readonly httpUrl: string;
  readonly durability: Durability;
  /**
   * The settings in force; replacing them applies a reloaded configuration (SIGHUP or a
   * watched file changed). A worker
   * paused because the service refused the key resumes.
   */
  readonly settings: LiveSettings<RunningSettings>;
  /** Closes the lifecycle: intake first, then the workers, then the HTTP API and Redis. Idempotent. */
  close(): Promise<void>;
}

/**
 * Milliseconds a shutdown may take in all: sessions in DATA get smtp.closeTimeout, uploads in
 * flight upload.closeTimeout, and 5 s closes the rest. However a step hangs (an upload past
 * its deadline waits on the API's timeout), stopping ends by then: what is still in flight is
 * recovered from Redis by the next run.
 */
export function shutdownDeadline(config: GatewayConfig): number {
  return config.smtp.closeTimeout + config.upload.closeTimeout + 5000;
}

/**
 * Builds and starts the daemon's components for one role, wiring each from its factory and
 * registering each on the lifecycle as it starts. Reads no environment and never exits:
 * src/main.ts does that.
 */
export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const { config, role, logger } = options;
  const metrics = options.metrics ?? createMetrics();
  const keys = createKeySpace(config.redis.prefix);
  const lifecycle = options.lifecycle ?? createLifecycle({ logger, deadline: shutdownDeadline(config) });
  const settings = createLiveSettings<RunningSettings>({
    config,
    apiBaseUrl: options.apiBaseUrl,
    apiKey: options.apiKey,
  });
  // The route table from the service (discovery), once its follower is made below.
  let follower: DiscoveryFollower | undefined;
  // The routes in force and an index of their workspaces, built again when the configuration
  // or the table from the service changes.
  let routing:
    | {
        config: GatewayConfig;
        table: DiscoveredTable | null;
        routed: RoutedWorkspaces;
        index: Map<string, FileWorkspace>;
      }
    | undefined;
  const currentRouting = () => {
    const { config } = settings.current();
    const table = follower?.table.current() ?? null;
    if (routing === undefined || routing.config !== config || routing.table !== table) {
      const routed = routedWorkspaces(config, table, Date.now());
      // Each problem once, not again at every refresh that finds it still there.
      const said = new Set(routing?.routed.problems);
      for (const problem of routed.problems) {
        if (!said.has(problem)) logger.warn({ component: 'discovery' }, problem);
      }
      const index = new Map<string, FileWorkspace>();
      // A workspace's own route before the routes of its document types' addresses.
      const own = routed.routes.filter((route) => route.addressOfDocumentType === undefined);
      for (const workspace of [...own, ...config.workspaces, ...routed.routes]) {
        if (!index.has(workspace.identifier)) index.set(workspace.identifier, workspace);
      }
      routing = { config, table, routed, index };
    }
    return routing;
  };
  const workspaces: UploadWorkspaces = {
    get: (identifier) =>
      currentRouting().index.get(identifier) ??
      // With discovery, mail accepted for a workspace the service has since dropped is still
      // uploaded to it with the defaults: the service, not the gateway, says it is gone.
      (settings.current().config.discovery === undefined ? undefined : { identifier }),
  };

  try {
    const redis = redisTarget(options.redisUrl, config.redis);
    const outage = createRedisOutageLog({ logger });
    // The sessions' small commands of one event-loop turn go out in one write. The queues'
    // connection below sends BullMQ's commands as BullMQ issues them.
    const intakeRedis = createIntakeConnection(redis, outage, 'intake', { gatherCommands: true });
    lifecycle.onClose('redis', () => closeConnection(intakeRedis));
    const durability = await checkDurability(intakeRedis, config, logger);
    // BullMQ defines its ~50 scripts as commands on the connection its queues are given, and
    // ioredis copies every such command onto each MULTI it builds on that connection: the
    // intake's commit, one per message, would pay for it (2% of its CPU at 100 KB). The
    // queues get a connection of their own, with the intake's fail-fast settings.
    const queueRedis = createIntakeConnection(redis, outage, 'queue');
    lifecycle.onClose('redis (queues)', () => closeConnection(queueRedis));
    const ledger = createMessageLedger(intakeRedis, keys, config.retention.messages);
    const index = createMessageIndex(intakeRedis, keys, config.retention.messages);
    warnUnidentifiable(config.workspaces, logger);
    // The queues the intake adds to and the HTTP API lists and retries, in every role, on the
    // fail-fast connection; closed after the roles, whose intake adds to them until it stops.
    const queues = openQueues({
      connection: queueRedis,
      keys,
      ...queueSettings(config),
      logger,
      outage,
      user: 'intake and HTTP API',
    });
    lifecycle.onClose('queues', () => queues.close());

    const context: RoleContext = {
      config,
      settings,
      lifecycle,
      logger,
      metrics,
      keys,
      ledger,
      index,
      redis,
      intakeRedis,
      queueRedis,
      queues,
      outage,
      durability,
      connections: createNeededConnections(),
      ...(options.random ? { random: options.random } : {}),
      ...(options.resolver ? { resolver: options.resolver } : {}),
    };
    if (config.discovery !== undefined) {
      follower = await startDiscovery(context, role, config.discovery);
    }
    let worker: UploadWorker | undefined;
    let smtp: SmtpIntake | undefined;
    const httpUrl = await startHttpRole(context, {
      smtp: () => smtp,
      worker: () => worker,
      routes: () => {
        const { config, table, routed } = currentRouting();
        return {
          discovery:
            config.discovery === undefined
              ? null
              : {
                  organization: config.discovery.organization,
                  refreshedAt: table === null ? null : new Date(table.refreshedAt).toISOString(),
                },
          routes: routed.routes.map((route) => ({
            address: route.ingestEmail,
            workspace: route.identifier,
            ...(route.addressOfDocumentType === undefined
              ? {}
              : { documentType: route.addressOfDocumentType }),
            source: route.source,
          })),
        };
      },
    });
    // Each role's modules load only in a process that runs it: an SMTP-only daemon never loads
    // the uploader and the parsing API's HTTP client (undici), a worker never smtp-server and
    // the MIME walk.
    if (role === 'all' || role === 'worker') {
      const { startUploadRole } = await import('./roles/upload-role.ts');
      worker = await startUploadRole(context, workspaces, config.http.publicUrl ?? httpUrl);
    }
    let smtpPort: number | null = null;
    if (role === 'all' || role === 'smtp') {
      const { startIntakeRole } = await import('./roles/intake-role.ts');
      const started = await startIntakeRole(
        context,
        () => currentRouting().routed.routes,
        config.http.publicUrl ?? httpUrl,
      );
      smtp = started.smtp;
      smtpPort = started.port;
    }

    settings.onChange((next) => {
      warnUnidentifiable(next.config.workspaces, logger);
      logger.info(
        { workspaces: next.config.workspaces.length },
        'configuration reloaded: API key, base URL, workspaces and the STARTTLS certificate; other settings take effect at the next start',
      );
    });

    return {
      smtpPort,
      httpUrl,
      durability,
      settings,
      async close() {
        await lifecycle.close();
      },
    };
  } catch (err) {
    await lifecycle.close();
    throw err;
  }
}

/**
 * The route table from the service (docs/discovery.md): every instance follows the one in
 * Redis, read before the listener opens so a restart while the service is away still routes;
 * a process that uploads also refreshes it from the service, one instance at a time.
 */
async function startDiscovery(
  context: RoleContext,
  role: Role,
  discovery: NonNullable<GatewayConfig['discovery']>,
): Promise<DiscoveryFollower> {
  const { keys, intakeRedis, logger, lifecycle, metrics } = context;
  // Often enough that a refresh shows within seconds; the service is read once per `every`.
  const interval = Math.min(discovery.every, 5000);
  const follower = createDiscoveryFollower({
    redis: intakeRedis,
    key: keys.discoveryTable,
    organization: discovery.organization,
    interval,
    logger,
  });
  lifecycle.onClose('discovery', () => follower.close());
  metrics.observe({
    discoveryAge: () => {
      const table = follower.table.current();
      return table === null ? null : Math.max(0, (Date.now() - table.refreshedAt) / 1000);
    },
  });
  if (role === 'all' || role === 'worker') {
    const [{ createDiscoveryRefresher }, { createCatalogueClient }] = await Promise.all([
      import('./intake/discovery-refresher.ts'),
      import('./parsing-api/organization-catalogue.ts'),
    ]);
    const refresher = createDiscoveryRefresher({
      redis: intakeRedis,
      tableKey: keys.discoveryTable,
      lockKey: keys.discoveryLock,
      // The section as at the start, as every instance's follower reads it: a changed
      // organization takes effect at the next start, on all of them alike.
      settings: () => discovery,
      openClient: () => {
        const { apiBaseUrl, apiKey, config } = context.settings.current();
        return createCatalogueClient({
          baseUrl: apiBaseUrl,
          apiKey,
          timeoutMs: config.api.timeout,
          allowInsecureHttp: config.api.allowInsecureHttp,
        });
      },
      logger,
    });
    const log = logger.child({ component: 'discovery' });
    let running: Promise<void> | undefined;
    const attempt = () => {
      running ??= refresher
        .attempt()
        .then(async (outcome) => {
          if (outcome === 'refreshed') await follower.poll();
        })
        .catch((err: unknown) =>
          log.warn({ err: asError(err) }, 'discovery refresh failed; the last good route table stays'),
        )
        .finally(() => {
          running = undefined;
        });
      return running;
    };
    const timer = setInterval(() => void attempt(), interval);
    timer.unref();
    lifecycle.onClose('discovery refresh', async () => {
      clearInterval(timer);
      await running;
    });
    await attempt();
  }
  await follower.poll();
  follower.start();
  return follower;
}

/** Workspaces whose customIdentifier template cannot tell a retry what an earlier attempt uploaded. */
function warnUnidentifiable(workspaces: readonly FileWorkspace[], logger: Logger): void {
  for (const workspace of workspaces) {
    if (identifiesOneUpload(workspace)) continue;
    logger.warn(
      { workspace: workspace.identifier },
      'upload.customIdentifier does not name one upload (it lacks {queueId} or {attachmentIndex}): ' +
        'a retry after a lost answer cannot find the earlier document, so it may be uploaded twice',
    );
  }
}
