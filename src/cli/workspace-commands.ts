import { type Command, Option } from 'commander';
import { type CommandContext, DEFAULT_CONFIG } from './cli-context.ts';
import { existingFile } from './option-parsers.ts';
import { createProgress } from './progress.ts';
import { UPDATE_OPTION_NAMES, type UpdateOptionValues } from './workspace/update-options.ts';

type WorkspaceOptions = { config?: string; write?: boolean } & UpdateOptionValues;

/** `ingest-gateway workspace get|update|sync`: the parsing service's Workspaces. */
export function registerWorkspaceCommands(program: Command, context: CommandContext): void {
  const workspace = program
    .command('workspace')
    .description("read and change the parsing service's workspaces, or compare them with the configuration")
    .usage('get|update|sync [options]')
    .addHelpText(
      'after',
      "\nThe service is the configuration's api.baseUrl (PARSER_API_URL) with its key (PARSER_API_KEY).",
    );

  workspace
    .command('get')
    .description("print the service's Workspace as JSON (the organization's signing key redacted)")
    .usage('ID [--config FILE]')
    .argument('<ID>', 'the workspace identifier')
    .addOption(serviceConfigOption())
    .action(async (id: string, options: WorkspaceOptions) => {
      await run(['get', id], options);
    });

  workspace
    .command('update')
    .description(
      'change exactly the fields given and print the result; nothing is sent when a value is wrong',
    )
    .usage('ID [--config FILE] [--name NAME] [--visibility organization|private] [options]')
    .argument('<ID>', 'the workspace identifier')
    .addOption(serviceConfigOption())
    .option('--name <NAME>', 'the display name')
    .option('--visibility <V>', 'organization or private')
    .option('--reject-invalid-documents <BOOL>', 'true or false')
    .option('--reject-duplicates <BOOL>', 'true, false or null (the organization decides)')
    .option('--document-types <A,B>', 'the document types the workspace accepts; "" for none')
    .option('--whitelist <RULE,...>', 'the sender allow-list, or null to accept every sender')
    .option('--document-splitter <ID>', 'the document splitter')
    .action(async (id: string, options: Record<string, string | undefined> & { config?: string }) => {
      await run(['update', id], { config: options.config, ...updateValues(options) });
    });

  workspace
    .command('sync')
    .description("compare each configured workspace's ingestEmail and allow-list with the service's")
    .usage('[--config FILE] [--write]')
    .addOption(serviceConfigOption())
    .option('--write', "take the service's values into the file, keeping its comments and layout")
    .addHelpText(
      'after',
      '\nExit code 1 when some workspace could not be read; the others are still reported.',
    )
    .action(async (options: WorkspaceOptions) => {
      const progress = createProgress({
        stream: context.stderr,
        terminal: context.stderrIsTerminal,
        label: 'reading workspaces from the service',
      });
      try {
        await run(['sync'], options, progress.advance);
      } finally {
        progress.end();
      }
    });

  async function run(
    positionals: string[],
    values: WorkspaceOptions,
    onProgress?: (done: number, total: number) => void,
  ): Promise<void> {
    const { runWorkspaceCommand } = await import('./workspace/run-workspace-command.ts');
    const exitCode = await runWorkspaceCommand({
      positionals,
      values,
      defaultConfigPath: DEFAULT_CONFIG,
      env: context.env,
      streams: { stdout: context.stdout, stderr: context.stderr },
      ...(onProgress ? { onProgress } : {}),
    });
    context.finish(exitCode);
  }
}

/** commander names option values in camelCase; update-options.ts reads them by option name. */
function updateValues(options: Readonly<Record<string, string | undefined>>): UpdateOptionValues {
  const values: UpdateOptionValues = {};
  for (const name of UPDATE_OPTION_NAMES) {
    values[name] = options[name.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase())];
  }
  return values;
}

/**
 * No default value: whether the file was named changes what its absence means
 * (resolve-service.ts), and without one get and update can do with the environment alone.
 */
function serviceConfigOption(): Option {
  return new Option(
    '-c, --config <FILE>',
    `the gateway configuration (default: ${DEFAULT_CONFIG}, or PARSER_API_URL and PARSER_API_KEY alone when it does not exist)`,
  ).argParser(existingFile);
}
