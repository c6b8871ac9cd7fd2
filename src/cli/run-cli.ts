import { Command, CommanderError } from 'commander';
import { type CliContext, EXIT_OK, EXIT_USAGE } from './cli-context.ts';
import { registerFailedCommands } from './failed-commands.ts';
import { registerGatewayCommands } from './gateway-commands.ts';
import { registerHeldCommands } from './held-commands.ts';
import { registerMockApiCommand } from './mock-api-command.ts';
import { registerReplayCommand } from './replay-command.ts';
import { registerSendCommand } from './send-command.ts';
import { registerWorkspaceCommands } from './workspace-commands.ts';

/**
 * The `ingest-gateway` command line: every command and its options declared with commander,
 * which gives each one its --help, refuses an unknown option or command naming the closest
 * valid one, and checks option values before the command runs. Resolves with the exit code:
 * 0 done (help and --version too), 2 a usage error (nothing was done), else the command's.
 * The commands import() what they run (the gateway, the mock API, BullMQ) when they run, so
 * --help, --version and a usage error answer without loading it, in a fraction of the time.
 */
export async function runCli(argv: readonly string[], context: CliContext): Promise<number> {
  let exitCode = EXIT_OK;
  const program = new Command('ingest-gateway')
    .description('Turns e-mailed attachments into documents for the parsing API.')
    .version(context.version, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'print this help')
    .helpCommand('help [command]', 'print the help of a command')
    // A throw instead of process.exit: only the composition root exits.
    .exitOverride()
    .showHelpAfterError()
    .configureOutput({
      writeOut: (text) => context.stdout.write(text),
      writeErr: (text) => context.stderr.write(text),
      outputError: (text, write) => write(oneLine(text)),
    });
  const commandContext = {
    ...context,
    finish(code: number) {
      exitCode = code;
    },
  };
  registerGatewayCommands(program, commandContext);
  registerMockApiCommand(program, commandContext);
  registerSendCommand(program, commandContext);
  registerReplayCommand(program, commandContext);
  registerFailedCommands(program, commandContext);
  registerHeldCommands(program, commandContext);
  registerWorkspaceCommands(program, commandContext);
  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (caught) {
    if (!(caught instanceof CommanderError)) throw caught;
    // Help and version end with exit code 0; every other CommanderError is a usage error,
    // already printed with the command's help.
    return caught.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
  }
  return exitCode;
}

/** commander puts its "(Did you mean --config?)" on a line of its own: the error reads as one line. */
function oneLine(text: string): string {
  return text.replace(/\n\(Did you mean (.+)\?\)/, ' (did you mean $1?)');
}
