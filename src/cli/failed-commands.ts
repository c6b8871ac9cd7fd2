import type { Command } from 'commander';
import { type CommandContext, USAGE_ERROR } from './cli-context.ts';
import { configOption } from './config-option.ts';
import type { FailedCommand } from './failed/failed-command.ts';
import { createProgress } from './progress.ts';

/** `ingest-gateway failed list|retry`: the uploads that ended `failed`, and putting them back. */
export function registerFailedCommands(program: Command, context: CommandContext): void {
  const failed = program
    .command('failed')
    .description('list the uploads that ended failed, or retry them')
    .usage('list|retry [options]');

  failed
    .command('list')
    .description('list the failed uploads with their reason and whether their attachment is still stored')
    .usage('[--json] [--config FILE]')
    .option('--json', 'print JSON instead of a table')
    .addOption(configOption())
    .action(async (options: { json?: boolean; config: string }, command: Command) => {
      await run({ action: 'list', json: options.json === true }, options.config, command);
    });

  failed
    .command('retry')
    .description('put failed uploads back in the queue with their attempts reset')
    .usage('(JOB_ID... | --all) [--config FILE]')
    .argument('[JOB_ID...]', 'the jobs to retry, as `failed list` shows them')
    .option('--all', 'retry every failed upload')
    .addOption(configOption())
    .addHelpText('after', '\nExit code 1 when some job could not be retried; each is listed.')
    .action(async (jobIds: string[], options: { all?: boolean; config: string }, command: Command) => {
      if (options.all === true && jobIds.length > 0) {
        command.error('error: give job ids or --all, not both', USAGE_ERROR);
      }
      if (options.all !== true && jobIds.length === 0) {
        command.error('error: failed retry needs job ids or --all', USAGE_ERROR);
      }
      await run({ action: 'retry', jobIds: options.all === true ? 'all' : jobIds }, options.config, command);
    });

  async function run(failedCommand: FailedCommand, configPath: string, command: Command): Promise<void> {
    const [{ ConfigError, loadConfig }, { createLogger }, { openFailedUploads }, { runFailedCommand }] =
      await Promise.all([
        import('../config/load-config.ts'),
        import('../logger.ts'),
        import('./failed/open-failed-uploads.ts'),
        import('./failed/failed-command.ts'),
      ]);
    const config = await loadConfig({ path: configPath, env: context.env }).catch((caught: unknown) => {
      if (!(caught instanceof ConfigError)) throw caught;
      return command.error(`error: ${configPath}: ${caught.problems.join('; ')}`, USAGE_ERROR);
    });
    const logger = createLogger({ level: 'warn', destination: context.stderr });
    const admin = openFailedUploads(config, config.redis.url, logger);
    const progress = createProgress({
      stream: context.stderr,
      terminal: context.stderrIsTerminal,
      label: 'retrying failed uploads',
    });
    try {
      context.finish(await runFailedCommand(failedCommand, admin.failed, context.stdout, progress.advance));
    } finally {
      progress.end();
      await admin.close();
    }
  }
}
