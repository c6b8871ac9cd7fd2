#!/usr/bin/env node
import { once } from 'node:events';
import { pino } from 'pino';
import { readCommandLine } from './command-line.ts';
import { createMockApi } from './create-mock-api.ts';
import { loadFixture, type MockFixture, WorkspaceFixtureError } from './workspace-seed.ts';

/**
 * `mock-parsing-api`: the mock alone, until SIGTERM or SIGINT (README.md, "From the command
 * line"). The composition root of the command: the only module that reads argv and the
 * environment or sets the exit code: 0 after a signal, 2 for a usage error.
 */

const USAGE_ERROR = 2;

async function main(): Promise<number> {
  const command = readCommandLine(process.argv.slice(2), process.env);
  if (command.kind === 'help') {
    process.stdout.write(command.text);
    return 0;
  }
  if (command.kind === 'usage-error') {
    for (const problem of command.problems) process.stderr.write(`mock-parsing-api: ${problem}\n`);
    process.stderr.write('Try mock-parsing-api --help.\n');
    return USAGE_ERROR;
  }
  const { settings } = command;
  let fixture: MockFixture = { workspaces: [], documentTypes: [] };
  try {
    if (settings.workspacesFile !== undefined) fixture = await loadFixture(settings.workspacesFile);
  } catch (caught) {
    if (!(caught instanceof WorkspaceFixtureError)) throw caught;
    process.stderr.write(`mock-parsing-api: ${caught.message}\n`);
    return USAGE_ERROR;
  }
  const logger = pino({ level: settings.logLevel });
  const mock = createMockApi({ ...settings.mock, logger, ...fixture });
  await mock.start({ host: settings.host, port: settings.port });
  await Promise.race([once(process, 'SIGTERM'), once(process, 'SIGINT')]);
  await mock.close();
  return 0;
}

process.exitCode = await main();
