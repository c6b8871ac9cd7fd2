import { type Command, Option } from 'commander';
import type { Role } from '../gateway.ts';
import { type CommandContext, EXIT_OK, EXIT_USAGE } from './cli-context.ts';
import { configOption } from './config-option.ts';

/** `ingest-gateway start` and `ingest-gateway check-config`: the daemon and its configuration. */
export function registerGatewayCommands(program: Command, context: CommandContext): void {
  program
    .command('start')
    .description('run the gateway: take mail over SMTP and upload its documents')
    .usage('[--config FILE] [--role all|smtp|worker]')
    .addOption(configOption())
    .addOption(
      new Option('--role <ROLE>', 'smtp only takes mail, worker only uploads, all does both')
        .choices(['all', 'smtp', 'worker'])
        .default('all'),
    )
    .action(async (options: { config: string; role: Role }) => {
      await context.runDaemon(options.config, options.role);
    });

  program
    .command('check-config')
    .description('validate the configuration and print it resolved, secrets redacted')
    .usage('[--config FILE]')
    .addOption(configOption())
    .addHelpText('after', '\nExit code 2 when the configuration has problems; each is listed.')
    .action(async (options: { config: string }) => {
      const [{ ConfigError, loadConfig }, { redactConfig }, { stringify }] = await Promise.all([
        import('../config/load-config.ts'),
        import('../config/redact-config.ts'),
        import('yaml'),
      ]);
      try {
        const config = await loadConfig({ path: options.config, env: context.env });
        context.stdout.write(`# ${options.config}: valid\n${stringify(redactConfig(config))}`);
        context.finish(EXIT_OK);
      } catch (caught) {
        if (!(caught instanceof ConfigError)) throw caught;
        context.stderr.write(`${options.config}: ${caught.problems.length} problem(s):\n`);
        for (const problem of caught.problems) context.stderr.write(`  - ${problem}\n`);
        context.finish(EXIT_USAGE);
      }
    });
}
