import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { ConfigError, loadConfig } from './config/load-config.ts';
import { redactUrl } from './config/redact-config.ts';
import type { GatewayConfig } from './config/schema.ts';
import { type FileWatch, watchFiles } from './config/watch-files.ts';
import { asError } from './errors.ts';
import { type Gateway, type Role, type RunningSettings, shutdownDeadline, startGateway } from './gateway.ts';
import { createLifecycle, type Lifecycle } from './lifecycle.ts';
import { createLogger, type Logger } from './logger.ts';
import { createMetrics } from './metrics.ts';
import { probeCluster, redisTarget } from './redis/connections.ts';
import {
  type LocalRedis,
  redisAnswers,
  redisServerInstalled,
  startLocalRedis,
} from './redis/local-redis-server.ts';

/**
 * The composition root of `ingest-gateway start`: reads the configuration and the environment,
 * finds Redis, starts the mock API in mock mode, starts the gateway, and stops it all on
 * SIGTERM/SIGINT through one lifecycle with one deadline. The only module besides cli.ts that
 * reads process.env or exits.
 */
export async function runDaemon(configPath: string, role: Role): Promise<void> {
  let config: GatewayConfig;
  try {
    config = await loadConfig({ path: configPath, env: process.env });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${configPath}: the configuration has ${err.problems.length} problem(s):\n`);
      for (const problem of err.problems) process.stderr.write(`  - ${problem}\n`);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger({ level: config.log.level });
  // Started first, closed last: the private Redis, then the mock API, then the gateway's steps.
  const lifecycle = createLifecycle({ logger, deadline: shutdownDeadline(config) });
  const metrics = createMetrics();

  const shutdown = async (signal: string) => {
    logger.info({ signal }, 'stopping: no new mail is taken, sessions in DATA and uploads in flight finish');
    const { failed, unfinished } = await lifecycle.close();
    if (unfinished.length > 0) {
      logger.warn({ unfinished }, 'stopped at the shutdown deadline; work still in flight is handed back');
    } else if (failed.length > 0) {
      logger.error({ failed }, 'stopped; some shutdown steps failed');
      process.exit(1);
    } else {
      logger.info('stopped');
    }
    process.exit(0);
  };
  let signalled = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (signalled) return;
      signalled = true;
      void shutdown(signal);
    });
  }

  try {
    const redisUrl = await resolveRedis(config, logger, lifecycle);
    const { baseUrl, apiKey } = await resolveApi(config, logger, lifecycle);
    let gateway: Gateway | undefined;
    // One reload at a time, in the order asked: a file event during a SIGHUP's reload follows it.
    let reloads = Promise.resolve();
    let watched: { files: readonly string[]; watch: FileWatch } | undefined;
    const reload = (trigger: ReloadTrigger) => {
      const running = gateway;
      if (!running || lifecycle.closing) return;
      reloads = reloads
        .then(async () => {
          if (lifecycle.closing) return;
          logger.info(trigger, 'reloading the configuration');
          const api = { baseUrl, apiKey, mock: config.api.mock };
          const applied = await reloadConfiguration(configPath, running, api, logger);
          metrics.configReloads.inc({ outcome: applied ? 'applied' : 'refused' });
          if (applied) await watch(running.settings.current().config);
        })
        .catch((err: unknown) => logger.error({ err: asError(err) }, 'the reload failed'));
    };
    /** (Re)starts the watch when the files to watch differ from those watched. */
    const watch = async (current: GatewayConfig) => {
      const files = watchedFiles(configPath, current, role);
      if (lifecycle.closing || (watched && sameList(watched.files, files))) return;
      watched?.watch.close();
      const onChange = (changed: readonly string[]) => reload({ trigger: 'file changed', files: changed });
      watched = { files, watch: watchFiles({ files, onChange, logger }) };
      await watched.watch.ready;
    };
    process.on('SIGHUP', () => reload({ trigger: 'SIGHUP' }));
    gateway = await startGateway({
      config,
      role,
      logger,
      metrics,
      redisUrl,
      apiBaseUrl: baseUrl,
      apiKey,
      lifecycle,
    });
    // Registered last, so closed first: no reload starts once the shutdown has begun.
    lifecycle.onClose('configuration watch', () => watched?.watch.close());
    // Watching before "ready": a change from then on is seen.
    await watch(config);
    if (gateway.smtpPort !== null) printFirstSteps(config, gateway.smtpPort, gateway.httpUrl, logger);
  } catch (err) {
    // A signal during the start: the shutdown it began ends the process.
    if (signalled) return;
    logger.fatal({ err: asError(err) }, 'the gateway could not start');
    await lifecycle.close();
    process.exit(1);
  }
}

/**
 * The configured Redis (REDIS_URL wins); with redis.startLocal, a private one when none answers.
 * A cluster must answer through one of its seeds and say its state is ok.
 */
async function resolveRedis(config: GatewayConfig, logger: Logger, lifecycle: Lifecycle): Promise<string> {
  const url = config.redis.url;
  // With Sentinels the URL names no server to probe: the connections ask them, and wait.
  if (config.redis.sentinels.length > 0) return url;
  const target = redisTarget(url, config.redis);
  if (typeof target === 'object' && 'cluster' in target) {
    const state = await probeCluster(target);
    if (state === 'ok') return url;
    const seeds = config.redis.cluster.join(', ');
    throw new Error(
      state === null
        ? `no node of the Redis Cluster answers at ${seeds}; start it or correct redis.cluster`
        : `the Redis Cluster at ${seeds} reports cluster_state:${state}; wait for it to be ok`,
    );
  }
  if (await redisAnswers(url)) return url;
  if (!config.redis.startLocal) {
    throw new Error(`Redis does not answer at ${redactUrl(url)}; start it or set REDIS_URL to one that does`);
  }
  if (!redisServerInstalled()) {
    throw new Error(
      `no Redis answers at ${redactUrl(url)} and no redis-server is installed to start one: install Redis ` +
        '(Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis) or set REDIS_URL',
    );
  }
  const redis: LocalRedis = await startLocalRedis(resolve('.data/redis'), logger);
  lifecycle.onClose('local redis-server', () => redis.stop());
  return redis.url;
}

async function resolveApi(
  config: GatewayConfig,
  logger: Logger,
  lifecycle: Lifecycle,
): Promise<{ baseUrl: string; apiKey: string }> {
  if (!config.api.mock) {
    const apiKey = await readApiKey(config);
    if (!config.api.baseUrl) throw new Error('api.baseUrl is required');
    return { baseUrl: config.api.baseUrl, apiKey };
  }
  const apiKey = config.api.apiKey ?? `mock-${randomBytes(12).toString('hex')}`;
  // Loaded only in mock mode: a gateway that uploads to the service never loads the mock.
  const { createMockApi, workspaceSeedsFromConfig } = await import('@ingest-gateway/mock-parsing-api');
  // A long-running mock keeps each upload's metadata, not its bytes, and knows the configured
  // workspaces, so GET /v3/workspaces/{identifier} answers for them.
  const mock = createMockApi({
    apiKey,
    logger,
    retainFileBytes: false,
    workspaces: workspaceSeedsFromConfig(config.workspaces),
  });
  const { url } = await lifecycle.start('mock api', {
    start: () => mock.start({ host: '127.0.0.1', port: 0 }),
    close: () => mock.close(),
  });
  logger.warn(
    { mockApi: url },
    'MOCK MODE (api.mock: true): documents go to the built-in mock of the parsing API, NOT to the parsing service',
  );
  return { baseUrl: url, apiKey };
}

/** api.apiKey (PARSER_API_KEY wins over the file), else the first line of api.apiKeyFile. */
async function readApiKey(config: GatewayConfig): Promise<string> {
  if (config.api.apiKey) return config.api.apiKey;
  if (!config.api.apiKeyFile) throw new Error('api.apiKey (PARSER_API_KEY) or api.apiKeyFile is required');
  const key = (await readFile(config.api.apiKeyFile, 'utf8')).split(/\r?\n/)[0]?.trim() ?? '';
  if (key === '') throw new Error(`api.apiKeyFile ${config.api.apiKeyFile} holds no key`);
  return key;
}

/** What started a reload, as its log line says it. */
type ReloadTrigger = { trigger: 'SIGHUP' } | { trigger: 'file changed'; files: readonly string[] };

/**
 * The files whose change reloads the configuration (docs/architecture.md, "Reload"): the
 * configuration file, the API key file when the key comes from it, and the STARTTLS key and
 * certificate where this process listens for SMTP.
 */
function watchedFiles(configPath: string, config: GatewayConfig, role: Role): string[] {
  const files = [resolve(configPath)];
  const { api, smtp } = config;
  if (!api.mock && !api.apiKey && api.apiKeyFile) files.push(resolve(api.apiKeyFile));
  if (role !== 'worker' && smtp.tls) files.push(resolve(smtp.tls.key), resolve(smtp.tls.cert));
  return files;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item, i) => item === b[i]);
}

/**
 * SIGHUP or a watched file changed: read the configuration (and the key file) again and
 * apply what can change while running. A configuration with problems is refused whole, and
 * the running one stays. Resolves with whether the new one was put in force.
 */
async function reloadConfiguration(
  configPath: string,
  gateway: Gateway,
  api: { baseUrl: string; apiKey: string; mock: boolean },
  logger: Logger,
): Promise<boolean> {
  let next: RunningSettings;
  try {
    const config = await loadConfig({ path: configPath, env: process.env });
    // In mock mode the in-process mock keeps running: its URL and key stay.
    next = api.mock
      ? { config, apiBaseUrl: api.baseUrl, apiKey: api.apiKey }
      : { config, apiBaseUrl: config.api.baseUrl ?? api.baseUrl, apiKey: await readApiKey(config) };
  } catch (err) {
    const problems = err instanceof ConfigError ? err.problems : [asError(err).message];
    logger.error({ problems }, 'configuration not reloaded; the running one stays');
    return false;
  }
  try {
    gateway.settings.replace(next);
  } catch (err) {
    logger.error({ err: asError(err) }, 'configuration reloaded, but a component failed to apply it');
  }
  return true;
}

function printFirstSteps(config: GatewayConfig, smtpPort: number, httpUrl: string, logger: Logger): void {
  const to = config.workspaces[0]?.ingestEmail ?? 'documents@ingest.localhost';
  const host = config.smtp.host === '0.0.0.0' || config.smtp.host === '::' ? '127.0.0.1' : config.smtp.host;
  logger.info(
    {
      try: `npx ingest-gateway send --server ${host}:${smtpPort} --from you@example.com --to ${to} --attach invoice.pdf`,
      records: `${httpUrl}/v1/messages/<id from the 250 reply>`,
    },
    'ready: send a test mail',
  );
}
