#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { runCli } from './cli/run-cli.ts';

/**
 * The composition root of the command line: hands argv, the environment, the standard
 * streams and the signals to the commands (src/cli/), and exits with the code they end with.
 * What each command does, its options and its help are in src/cli/.
 */

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

runCli(process.argv.slice(2), {
  version,
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
  stderrIsTerminal: process.stderr.isTTY === true,
  // Loaded when started: the rest of the command line answers without the gateway's modules.
  runDaemon: async (configPath, role) => (await import('./main.ts')).runDaemon(configPath, role),
  untilStopped: () =>
    new Promise((resolve) => {
      process.once('SIGTERM', resolve);
      process.once('SIGINT', resolve);
    }),
})
  .then((code) => {
    process.exitCode = code;
  })
  .catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
