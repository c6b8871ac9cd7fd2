import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { ConfigError, loadConfig } from './config/load-config.ts';
import type { GatewayConfig } from './config/schema.ts';
import { asError } from './errors.ts';
import { type Gateway, type Role, startGateway } from './gateway.ts';
import { createLogger, type Logger } from './logger.ts';
import { createMockApi } from './mock-api/create-mock-api.ts';
import { workspaceSeedsFromConfig } from './mock-api/workspace-seed.ts';
import { type LocalRedis, redisAnswers, redisServerInstalled, startLocalRedis } from './queue/local-redis.ts';

/**
 * The composition root of `ingest-gateway start`: reads the configuration and the environment,
 * finds Redis, starts the mock API in mock mode, starts the gateway, and stops it all on
 * SIGTERM/SIGINT. The only module besides cli.ts that reads process.env or exits.
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
  const stops: Array<() => Promise<void>> = [];
  let gateway: Gateway | undefined;

  const shutdown = async (signal: string) => {
    logger.info({ signal }, 'stopping: no new mail is taken, sessions in DATA and uploads in flight finish');
    // However a step hangs (an upload past its deadline waits on the API's timeout), the
    // process exits by then: what is still in flight is recovered from Redis by the next run.
    const deadline = shutdownDeadlineMs(config);
    setTimeout(() => {
      logger.warn({ ms: deadline }, 'stopped at the shutdown deadline; work still in flight is handed back');
      process.exit(0);
    }, deadline).unref();
    try {
      await gateway?.close();
      for (const stop of stops.reverse()) await stop();
      logger.info('stopped');
      process.exit(0);
    } catch (err) {
      logger.error({ err: asError(err) }, 'shutdown failed');
      process.exit(1);
    }
  };
  let stopping = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      void shutdown(signal);
    });
  }

  try {
    const redisUrl = await resolveRedis(config, logger, stops);
    const { baseUrl, apiKey } = await resolveApi(config, logger, stops);
    process.on('SIGHUP', () => {
      if (!gateway || stopping) return;
      logger.info('SIGHUP: reloading the configuration');
      void reloadConfiguration(configPath, gateway, { baseUrl, apiKey, mock: config.api.mock }, logger);
    });
    gateway = await startGateway({ config, role, logger, redisUrl, apiBaseUrl: baseUrl, apiKey });
    if (gateway.smtpPort !== null) printFirstSteps(config, gateway.smtpPort, gateway.httpUrl, logger);
  } catch (err) {
    logger.fatal({ err: asError(err) }, 'the gateway could not start');
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    process.exit(1);
  }
}

/**
 * How long a stop may take, ms: sessions in DATA get smtp.closeTimeout, then uploads in
 * flight get upload.closeTimeout, and 5 s for the rest. A supervisor's grace period before
 * SIGKILL (docker-compose.yml's stop_grace_period) should be longer.
 */
export function shutdownDeadlineMs(config: GatewayConfig): number {
  return config.smtp.closeTimeout + config.upload.closeTimeout + 5000;
}

/** The configured Redis (REDIS_URL wins); with redis.startLocal, a private one when none answers. */
async function resolveRedis(
  config: GatewayConfig,
  logger: Logger,
  stops: Array<() => Promise<void>>,
): Promise<string> {
  const url = config.redis.url;
  // With Sentinels the URL names no server to probe: the connections ask them, and wait.
  if (config.redis.sentinels.length > 0) return url;
  if (await redisAnswers(url)) return url;
  if (!config.redis.startLocal) {
    throw new Error(`Redis does not answer at ${redactUrl(url)}; start it or set REDIS_URL to one that does`);
  }
  if (!redisServerInstalled()) {
    throw new Error(
      `no Redis answers at ${url} and no redis-server is installed to start one: install Redis ` +
        '(Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis) or set REDIS_URL',
    );
  }
  const redis: LocalRedis = await startLocalRedis(resolve('.data/redis'), logger);
  stops.push(() => redis.stop());
  return redis.url;
}

async function resolveApi(
  config: GatewayConfig,
  logger: Logger,
  stops: Array<() => Promise<void>>,
): Promise<{ baseUrl: string; apiKey: string }> {
  if (!config.api.mock) {
    const apiKey = await readApiKey(config);
    if (!config.api.baseUrl) throw new Error('api.baseUrl is required');
    return { baseUrl: config.api.baseUrl, apiKey };
  }
  const apiKey = config.api.apiKey ?? `mock-${randomBytes(12).toString('hex')}`;
  // A long-running mock keeps each upload's metadata, not its bytes, and knows the configured
  // workspaces, so GET /v3/workspaces/{identifier} answers for them.
  const mock = createMockApi({
    apiKey,
    logger,
    retainFileBytes: false,
    workspaces: workspaceSeedsFromConfig(config.workspaces),
  });
  const { url } = await mock.start({ host: '127.0.0.1', port: 0 });
  stops.push(() => mock.close());
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

/**
 * SIGHUP: read the configuration (and the key file) again and apply what can change while
 * running. A configuration with problems is refused whole, and the running one stays.
 */
async function reloadConfiguration(
  configPath: string,
  gateway: Gateway,
  api: { baseUrl: string; apiKey: string; mock: boolean },
  logger: Logger,
): Promise<void> {
  try {
    const config = await loadConfig({ path: configPath, env: process.env });
    // In mock mode the in-process mock keeps running: its URL and key stay.
    const next = api.mock
      ? { apiBaseUrl: api.baseUrl, apiKey: api.apiKey }
      : { apiBaseUrl: config.api.baseUrl ?? api.baseUrl, apiKey: await readApiKey(config) };
    gateway.reload({ config, ...next });
  } catch (err) {
    const problems = err instanceof ConfigError ? err.problems : [asError(err).message];
    logger.error({ problems }, 'configuration not reloaded; the running one stays');
  }
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

function redactUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}
