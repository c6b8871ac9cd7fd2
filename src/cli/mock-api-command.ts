import type { MockFixture } from '@ingest-gateway/mock-parsing-api';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { type CommandContext, EXIT_OK, USAGE_ERROR } from './cli-context.ts';
import { configOption } from './config-option.ts';
import { existingFile, portNumber, wholeNumber } from './option-parsers.ts';

interface MockApiOptions {
  host: string;
  port: number;
  apiKey?: string;
  workspaces?: string;
  config?: string;
  organization?: string;
  resthookSignatureKey?: string;
  processingMs: number;
  listItems: 'document' | 'meta';
  listPageSize?: number;
}

/**
 * `ingest-gateway mock-api`: the fake parsing API (packages/mock-parsing-api) alone, until
 * SIGTERM or SIGINT. Its own `mock-parsing-api` command does the same; this one can also
 * serve the workspaces of a gateway configuration (--config).
 */
export function registerMockApiCommand(program: Command, context: CommandContext): void {
  program
    .command('mock-api')
    .description('run the fake parsing API alone, for development and tests')
    .usage('[--host H] [--port N] [--api-key KEY] [--workspaces FILE] [--config FILE] [options]')
    .option('--host <H>', 'interface to listen on', '127.0.0.1')
    .option('--port <N>', 'TCP port; 0 picks a free one', portNumber, 8026)
    .option('--api-key <KEY>', 'the key clients must send (default: PARSER_API_KEY)')
    .option(
      '--workspaces <FILE>',
      'seed the workspaces (and documentTypes) from this fixture (YAML)',
      existingFile,
    )
    .addOption(configOption(null))
    .option('--organization <ID>', "the workspaces' organization identifier and name")
    .option(
      '--resthook-signature-key <KEY>',
      'key that signs resthook deliveries (default: MOCK_RESTHOOK_SIGNATURE_KEY)',
    )
    .option('--processing-ms <N>', 'milliseconds a document takes to become ready', wholeNumber, 0)
    .addOption(
      new Option('--list-items <SHAPE>', 'each result of GET /v3/documents: a full Document or its bare Meta')
        .choices(['document', 'meta'])
        .default('document'),
    )
    .option(
      '--list-page-size <N>',
      'results per page of GET /v3/documents (default: all on one page)',
      pageSize,
    )
    .addHelpText(
      'after',
      '\nWith --config, the workspaces of that gateway configuration the fixture lacks are served too.' +
        '\nPATCH /_mock/settings changes the list settings while it runs.',
    )
    .action(async (options: MockApiOptions, command: Command) => {
      const apiKey = options.apiKey ?? context.env.PARSER_API_KEY;
      if (!apiKey)
        command.error('error: give the key clients must send: --api-key KEY or PARSER_API_KEY', USAGE_ERROR);
      const [{ ConfigError }, { createLogger }, { createMockApi, WorkspaceFixtureError }] = await Promise.all(
        [
          import('../config/load-config.ts'),
          import('../logger.ts'),
          import('@ingest-gateway/mock-parsing-api'),
        ],
      );
      const { workspaces, documentTypes } = await mockCatalogue(options, context).catch((caught: unknown) => {
        if (!(caught instanceof ConfigError || caught instanceof WorkspaceFixtureError)) throw caught;
        return command.error(`error: ${caught.message}`, USAGE_ERROR);
      });
      const resthookSignatureKey = options.resthookSignatureKey ?? context.env.MOCK_RESTHOOK_SIGNATURE_KEY;
      const logger = createLogger(
        context.env.LOG_LEVEL === undefined ? {} : { level: context.env.LOG_LEVEL },
      );
      const mock = createMockApi({
        apiKey,
        logger,
        retainFileBytes: false,
        workspaces,
        documentTypes,
        processingMs: options.processingMs,
        documentList: { items: options.listItems, pageSize: options.listPageSize ?? null },
        ...(resthookSignatureKey ? { resthookSignatureKey } : {}),
        ...(options.organization
          ? { organization: { identifier: options.organization, name: options.organization } }
          : {}),
      });
      const { url } = await mock.start({ host: options.host, port: options.port });
      logger.info({ url }, 'mock parsing API listening: POST /v3/documents, GET /v3/documents/{identifier}');
      await context.untilStopped();
      await mock.close();
      context.finish(EXIT_OK);
    });
}

/**
 * The mock's workspaces (a fixture's, then those of a gateway configuration the fixture lacks)
 * and the fixture's document types.
 */
async function mockCatalogue(options: MockApiOptions, context: CommandContext): Promise<MockFixture> {
  const [{ loadConfig }, { combineSeeds, loadFixture, workspaceSeedsFromConfig }] = await Promise.all([
    import('../config/load-config.ts'),
    import('@ingest-gateway/mock-parsing-api'),
  ]);
  const fixture: MockFixture =
    options.workspaces === undefined
      ? { workspaces: [], documentTypes: [] }
      : await loadFixture(options.workspaces);
  if (options.config === undefined) return fixture;
  const config = await loadConfig({ path: options.config, env: context.env });
  return {
    ...fixture,
    workspaces: combineSeeds(fixture.workspaces, workspaceSeedsFromConfig(config.workspaces)),
  };
}

/** 1 to 1000, the mock's bounds for a page. */
function pageSize(text: string): number {
  const size = wholeNumber(text);
  if (size < 1 || size > 1000) throw new InvalidArgumentError('must be 1 to 1000');
  return size;
}
