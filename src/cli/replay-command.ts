import { statSync } from 'node:fs';
import { type Command, InvalidArgumentError } from 'commander';
import { type CommandContext, EXIT_FAILED, EXIT_OK, USAGE_ERROR } from './cli-context.ts';
import { configOption } from './config-option.ts';
import { collect } from './option-parsers.ts';
import { createProgress } from './progress.ts';

interface ReplayCommandOptions {
  config: string;
  to?: string[];
  from?: string;
}

/**
 * `ingest-gateway replay`: stored mail (.eml files, folders of them, mbox files) taken again
 * through the intake, in this process, straight into the gateway's Redis (README, "Replaying mail").
 */
export function registerReplayCommand(program: Command, context: CommandContext): void {
  program
    .command('replay')
    .description('take stored mail (.eml files, folders of them, mbox files) again, as if sent over SMTP')
    .usage('PATH... [--to ADDR]... [--from ADDR] [--config FILE]')
    .argument('<PATH...>', 'an .eml file, a folder (every *.eml below it) or an mbox file')
    .option('--to <ADDR>', "a recipient instead of the message's own; repeat for more", collect(String))
    .option('--from <ADDR>', "the envelope sender instead of the message's Return-Path or From")
    .addOption(configOption())
    .addHelpText(
      'after',
      '\nOne line per message: PATH (PATH#N for the Nth message of an mbox) and the reply SMTP would give.\n' +
        'Exit code 1 when any message was not taken.',
    )
    .action(async (paths: string[], options: ReplayCommandOptions, command: Command) => {
      for (const path of paths) {
        try {
          statSync(path);
        } catch {
          command.error(
            `error: ${new InvalidArgumentError(`no such file or folder: ${path}`).message}`,
            USAGE_ERROR,
          );
        }
      }
      const [
        { ConfigError, loadConfig },
        { createLogger },
        { openReplayIntake },
        { replayMessages },
        limits,
      ] = await Promise.all([
        import('../config/load-config.ts'),
        import('../logger.ts'),
        import('../roles/replay-intake.ts'),
        import('./replay/replay-messages.ts'),
        import('../mail/walk-limits.ts'),
      ]);
      const config = await loadConfig({ path: options.config, env: context.env }).catch((caught: unknown) => {
        if (!(caught instanceof ConfigError)) throw caught;
        return command.error(`error: ${options.config}: ${caught.problems.join('; ')}`, USAGE_ERROR);
      });
      const logger = createLogger({ level: 'warn', destination: context.stderr });
      const intake = await openReplayIntake(config, config.redis.url, logger);
      const progress = createProgress({
        stream: context.stderr,
        terminal: context.stderrIsTerminal,
        label: 'replaying',
      });
      try {
        const { refused } = await replayMessages(
          paths,
          { ...(options.to ? { to: options.to } : {}), ...(options.from ? { from: options.from } : {}) },
          { receive: intake.receive, routes: intake.routes, maxRecipients: config.smtp.maxRecipients },
          {
            out: context.stdout,
            logger,
            headBytes: limits.MAX_HEADER_BYTES,
            ...(context.stderrIsTerminal ? { progress } : {}),
          },
        );
        context.finish(refused > 0 ? EXIT_FAILED : EXIT_OK);
      } finally {
        progress.end();
        await intake.close();
      }
    });
}
