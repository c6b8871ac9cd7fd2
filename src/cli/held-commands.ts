import type { Command } from 'commander';
import { type CommandContext, USAGE_ERROR } from './cli-context.ts';
import { configOption } from './config-option.ts';
import { defaultHttpUrl, gatewayHttp } from './gateway-http.ts';
import type { HeldCommand } from './held/held-command.ts';
import { httpUrl } from './option-parsers.ts';

type ApiOptions = { http?: string; config?: string };

/** `ingest-gateway held list|release|discard`: held mail, through the running gateway's HTTP API. */
export function registerHeldCommands(program: Command, context: CommandContext): void {
  const held = program
    .command('held')
    .description('list held mail, release it (and admit its sender from now on) or discard it')
    .usage('list|release|discard [options]')
    .addHelpText(
      'after',
      `\nThe gateway's HTTP API is --http, else the http section of --config, else ${defaultHttpUrl}; HTTP_TOKEN is its bearer token when the file names none.`,
    );
  const apiOptions = (command: Command) =>
    command
      .option(
        '--http <URL>',
        `the gateway's HTTP API (default: from --config, else ${defaultHttpUrl})`,
        httpUrl,
      )
      .addOption(configOption(null));

  apiOptions(
    held
      .command('list')
      .description('list the held messages: id, when, workspace, reason, sender, documents, subject')
      .usage('[--json] [--http URL | --config FILE]')
      .option('--json', 'print the records as JSON instead of a table'),
  ).action(async (options: ApiOptions & { json?: boolean }, command: Command) => {
    await run({ action: 'list', json: options.json === true }, options, command);
  });

  apiOptions(
    held
      .command('release')
      .description("queue a held message's documents for upload")
      .usage('ID [--allow-sender | --allow-domain] [--http URL | --config FILE]')
      .argument('<ID>', 'the queue id, as `held list` shows it')
      .option('--allow-sender', "first add the sender's address to the workspace's allow-list")
      .option('--allow-domain', "first add *@ the sender's domain to the workspace's allow-list")
      .addHelpText(
        'after',
        '\nWith --allow-sender or --allow-domain the rule goes to the parsing service and to every gateway\ninstance; when the service refuses it, nothing is released. Exit code 1 when refused.',
      ),
  ).action(
    async (
      id: string,
      options: ApiOptions & { allowSender?: boolean; allowDomain?: boolean },
      command: Command,
    ) => {
      if (options.allowSender === true && options.allowDomain === true) {
        command.error('error: give --allow-sender or --allow-domain, not both', USAGE_ERROR);
      }
      const allowSender =
        options.allowSender === true ? 'address' : options.allowDomain === true ? 'domain' : undefined;
      await run({ action: 'release', id, ...(allowSender ? { allowSender } : {}) }, options, command);
    },
  );

  apiOptions(
    held
      .command('discard')
      .description("delete a held message's stored bytes; its record stays")
      .usage('ID [--http URL | --config FILE]')
      .argument('<ID>', 'the queue id, as `held list` shows it'),
  ).action(async (id: string, options: ApiOptions, command: Command) => {
    await run({ action: 'discard', id }, options, command);
  });

  async function run(heldCommand: HeldCommand, options: ApiOptions, command: Command): Promise<void> {
    const api = await gatewayHttp(options, command, context);
    const { runHeldCommand } = await import('./held/held-command.ts');
    context.finish(await runHeldCommand(heldCommand, api, context.stdout, context.stderr));
  }
}
