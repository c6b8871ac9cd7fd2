#!/usr/bin/env node
import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import { createTransport } from 'nodemailer';
import { stringify } from 'yaml';
import { type FailedCommand, runFailedCommand } from './admin/failed-command.ts';
import { openFailedUploads } from './admin/open-failed-uploads.ts';
import { ConfigError, loadConfig } from './config/load-config.ts';
import { redactConfig } from './config/redact-config.ts';
import type { Role } from './gateway.ts';
import { createLogger } from './logger.ts';
import { runDaemon } from './main.ts';
import {
  runWorkspaceCommand,
  WORKSPACE_USAGE,
  workspaceArgOptions,
} from './workspace/run-workspace-command.ts';

const usage = `ingest-gateway: turns e-mailed attachments into documents for the parsing API

usage:
  ingest-gateway start [--config FILE] [--role all|smtp|worker]
  ingest-gateway check-config [--config FILE]
  ingest-gateway mock-api [--host H] [--port N] [--api-key KEY] [--workspaces FILE] [--config FILE]
                          [--organization ID] [--resthook-signature-key KEY] [--processing-ms N]
  ingest-gateway send --server HOST:PORT --from ADDR --to ADDR [--subject S] [--attach FILE]...
  ingest-gateway failed list [--json] [--config FILE]
  ingest-gateway failed retry (JOB_ID... | --all) [--config FILE]
${WORKSPACE_USAGE}`;

const defaultConfig = 'config/gateway.yaml';

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'start': {
      const { values } = parseArgs({
        args: rest,
        options: {
          config: { type: 'string', default: defaultConfig },
          role: { type: 'string', default: 'all' },
        },
      });
      const role = values.role;
      if (role !== 'all' && role !== 'smtp' && role !== 'worker')
        return fail(`--role must be all, smtp or worker, not ${role}`);
      return runDaemon(values.config, role satisfies Role);
    }
    case 'check-config': {
      const { values } = parseArgs({
        args: rest,
        options: { config: { type: 'string', default: defaultConfig } },
      });
      try {
        const config = await loadConfig({ path: values.config, env: process.env });
        process.stdout.write(`# ${values.config}: valid\n${stringify(redactConfig(config))}`);
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        process.stderr.write(`${values.config}: ${err.problems.length} problem(s):\n`);
        for (const problem of err.problems) process.stderr.write(`  - ${problem}\n`);
        process.exit(2);
      }
      return;
    }
    case 'mock-api':
      return runMockApi(rest);
    case 'send':
      return send(rest);
    case 'failed':
      return failed(rest);
    case 'workspace':
      return workspace(rest);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(usage);
      return;
    default:
      return fail(`unknown command ${command}`);
  }
}

async function runMockApi(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      host: { type: 'string', default: '127.0.0.1' },
      port: { type: 'string', default: '8026' },
      'api-key': { type: 'string' },
      workspaces: { type: 'string' },
      config: { type: 'string' },
      'resthook-signature-key': { type: 'string' },
      organization: { type: 'string' },
      'processing-ms': { type: 'string' },
    },
  });
  const port = Number(values.port);
  const processingMs = Number(values['processing-ms'] ?? '0');
  if (!Number.isInteger(processingMs) || processingMs < 0) {
    return fail(`--processing-ms must be a whole number of milliseconds, not ${values['processing-ms']}`);
  }
  const resthookSignatureKey = values['resthook-signature-key'] ?? process.env.MOCK_RESTHOOK_SIGNATURE_KEY;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    return fail(`--port must be a port number, not ${values.port}`);
  const apiKey = values['api-key'] ?? process.env.PARSER_API_KEY;
  if (!apiKey) return fail('give the key clients must send: --api-key KEY or PARSER_API_KEY');
  const logger = createLogger({ level: process.env.LOG_LEVEL ?? 'info' });
  const workspaces = await mockWorkspaces(values.workspaces, values.config);
  // Loaded only for this command: the other commands, the daemon among them, never load the mock.
  const { createMockApi } = await import('./mock-api/create-mock-api.ts');
  const mock = createMockApi({
    apiKey,
    logger,
    retainFileBytes: false,
    workspaces,
    processingMs,
    ...(resthookSignatureKey ? { resthookSignatureKey } : {}),
    ...(values.organization
      ? { organization: { identifier: values.organization, name: values.organization } }
      : {}),
  });
  const { url } = await mock.start({ host: values.host, port });
  logger.info({ url }, 'mock parsing API listening: POST /v3/documents, GET /v3/documents/{identifier}');
  const stop = () => {
    void mock.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

async function send(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      server: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      subject: { type: 'string', default: 'Documents' },
      attach: { type: 'string', multiple: true, default: [] },
    },
  });
  if (!values.server || !values.from || !values.to)
    return fail('send needs --server HOST:PORT, --from and --to');
  const match = /^(.+):(\d+)$/.exec(values.server);
  if (!match?.[1] || !match[2]) return fail(`--server must be HOST:PORT, not ${values.server}`);
  const transport = createTransport({
    host: match[1].replace(/^\[|\]$/g, ''),
    port: Number(match[2]),
    secure: false,
    ignoreTLS: true,
  });
  try {
    const info = await transport.sendMail({
      from: values.from,
      to: values.to,
      subject: values.subject,
      text: `Sent with ingest-gateway send: ${values.attach.length} attachment(s).`,
      attachments: values.attach.map((path) => ({ path, filename: basename(path) })),
    });
    process.stdout.write(`${info.response}\n`);
  } catch (err) {
    const response = err && typeof err === 'object' && 'response' in err ? String(err.response) : String(err);
    process.stderr.write(`not accepted: ${response}\n`);
    process.exitCode = 1;
  } finally {
    transport.close();
  }
}

async function failed(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      config: { type: 'string', default: defaultConfig },
      json: { type: 'boolean', default: false },
      all: { type: 'boolean', default: false },
    },
  });
  const [action, ...jobIds] = positionals;
  let command: FailedCommand;
  if (action === 'list') command = { action: 'list', json: values.json };
  else if (action === 'retry' && (values.all || jobIds.length > 0)) {
    command = { action: 'retry', jobIds: values.all ? 'all' : jobIds };
  } else return fail('failed takes list, or retry with job ids or --all');
  const config = await loadConfig({ path: values.config, env: process.env }).catch((err: unknown) => {
    if (!(err instanceof ConfigError)) throw err;
    fail(`${values.config}: ${err.problems.join('; ')}`);
    throw err;
  });
  const logger = createLogger({ level: 'warn', destination: process.stderr });
  const admin = openFailedUploads(config, config.redis.url, logger);
  try {
    process.exitCode = await runFailedCommand(command, admin.failed, process.stdout);
  } finally {
    await admin.close();
  }
}

/** The mock's workspaces: a fixture's, then those of a gateway configuration the fixture lacks. */
async function mockWorkspaces(fixture: string | undefined, configPath: string | undefined) {
  const { combineSeeds, loadWorkspaceFixture, WorkspaceFixtureError, workspaceSeedsFromConfig } =
    await import('./mock-api/workspace-seed.ts');
  try {
    const seeds = fixture === undefined ? [] : await loadWorkspaceFixture(fixture);
    if (configPath === undefined) return seeds;
    const config = await loadConfig({ path: configPath, env: process.env });
    return combineSeeds(seeds, workspaceSeedsFromConfig(config.workspaces));
  } catch (err) {
    if (!(err instanceof ConfigError || err instanceof WorkspaceFixtureError)) throw err;
    fail(err.message);
    throw err;
  }
}

async function workspace(args: string[]): Promise<void> {
  const parsed = usageOnThrow(() =>
    parseArgs({ args, allowPositionals: true, options: workspaceArgOptions }),
  );
  if (parsed === undefined) return;
  process.exitCode = await runWorkspaceCommand({
    positionals: parsed.positionals,
    values: parsed.values,
    defaultConfigPath: defaultConfig,
    env: process.env,
    streams: { stdout: process.stdout, stderr: process.stderr },
  });
}

/** parseArgs throws on an unknown option or a missing value: that is a usage error (exit 2). */
function usageOnThrow<T>(parse: () => T): T | undefined {
  try {
    return parse();
  } catch (err) {
    fail(err instanceof Error ? err.message : String(err));
    return undefined;
  }
}

function fail(message: string): void {
  process.stderr.write(`${message}\n\n${usage}`);
  process.exit(2);
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
