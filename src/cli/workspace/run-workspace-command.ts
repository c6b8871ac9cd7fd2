import type { Env } from '../../config/interpolate-env.ts';
import { asError } from '../../errors.ts';
import { createWorkspaceClient, type WorkspaceClient } from '../../parsing-api/workspace-client.ts';
import { type CommandStreams, EXIT_USAGE } from './command-io.ts';
import { getWorkspaceCommand } from './get-workspace.ts';
import { resolveService } from './resolve-service.ts';
import { syncWorkspacesCommand } from './sync-workspaces.ts';
import { UPDATE_OPTION_NAMES, type UpdateOptionValues } from './update-options.ts';
import { updateWorkspaceCommand } from './update-workspace.ts';

/**
 * `ingest-gateway workspace get|update|sync`, from parsed arguments to exit code: checks the
 * arguments fit the subcommand, finds the service (resolve-service.ts), makes the client,
 * runs the command, closes the client. cli.ts parses argv with `workspaceArgOptions` and
 * hands over; the commands themselves are in get-workspace.ts, update-workspace.ts and
 * sync-workspaces.ts.
 */

export const WORKSPACE_USAGE = `  ingest-gateway workspace get ID [--config FILE]
  ingest-gateway workspace update ID [--config FILE] [--name NAME] [--visibility organization|private]
      [--reject-invalid-documents true|false] [--reject-duplicates true|false|null]
      [--document-types A,B] [--whitelist PATTERN,...|null] [--document-splitter ID]
  ingest-gateway workspace sync [--config FILE] [--write]
`;

/** The options of node:util parseArgs for `workspace` (every subcommand's; checked per subcommand here). */
export const workspaceArgOptions = {
  config: { type: 'string' },
  write: { type: 'boolean' },
  name: { type: 'string' },
  visibility: { type: 'string' },
  'reject-invalid-documents': { type: 'string' },
  'reject-duplicates': { type: 'string' },
  'document-types': { type: 'string' },
  whitelist: { type: 'string' },
  'document-splitter': { type: 'string' },
} as const;

export interface WorkspaceCommandInput {
  /** The positionals after `workspace`: the subcommand, then the workspace ID for get and update. */
  positionals: readonly string[];
  values: { config?: string | undefined; write?: boolean | undefined } & UpdateOptionValues;
  /** Used when --config is not given. */
  defaultConfigPath: string;
  env: Env;
  streams: CommandStreams;
  /** Hears how many workspaces sync has read, for a progress line over many. */
  onProgress?: (done: number, total: number) => void;
  /** Makes the client; tests pass one that records what it was given. */
  createClient?: typeof createWorkspaceClient;
}

export async function runWorkspaceCommand(input: WorkspaceCommandInput): Promise<number> {
  const { streams, values } = input;
  const usage = (message: string) => {
    streams.stderr.write(`${message}\n\nusage:\n${WORKSPACE_USAGE}`);
    return EXIT_USAGE;
  };
  const [subcommand, ...operands] = input.positionals;
  const updateGiven = UPDATE_OPTION_NAMES.filter((name) => values[name] !== undefined);
  if (subcommand !== 'get' && subcommand !== 'update' && subcommand !== 'sync') {
    return usage(
      subcommand === undefined
        ? 'workspace needs get, update or sync'
        : `unknown workspace command ${subcommand}`,
    );
  }
  const wantsId = subcommand !== 'sync';
  if (wantsId && operands.length !== 1) return usage(`workspace ${subcommand} needs one workspace ID`);
  if (!wantsId && operands.length > 0) return usage(`workspace sync takes no ID, got ${operands.join(' ')}`);
  if (subcommand !== 'update' && updateGiven.length > 0) {
    return usage(`${updateGiven.map((name) => `--${name}`).join(', ')}: only for workspace update`);
  }
  if (subcommand !== 'sync' && values.write !== undefined) return usage('--write: only for workspace sync');

  const resolved = await resolveService({
    configPath: values.config ?? input.defaultConfigPath,
    configGiven: values.config !== undefined,
    needConfig: subcommand === 'sync',
    env: input.env,
  });
  if (!resolved.ok) {
    for (const problem of resolved.problems) streams.stderr.write(`${problem}\n`);
    return EXIT_USAGE;
  }
  let client: WorkspaceClient;
  try {
    client = (input.createClient ?? createWorkspaceClient)(resolved.target);
  } catch (caught) {
    // A base URL the client refuses (plain http to another host): a local configuration error.
    streams.stderr.write(`${asError(caught).message}\n`);
    return EXIT_USAGE;
  }
  try {
    const identifier = operands[0] ?? '';
    if (subcommand === 'get') return await getWorkspaceCommand({ identifier }, client, streams);
    if (subcommand === 'update') return await updateWorkspaceCommand({ identifier, values }, client, streams);
    const { config } = resolved;
    if (config === undefined) throw new Error('resolveService returns the configuration when it is needed');
    return await syncWorkspacesCommand(
      {
        workspaces: config.workspaces,
        discovery: config.discovery !== undefined,
        configPath: values.config ?? input.defaultConfigPath,
        write: values.write === true,
        env: input.env,
        ...(input.onProgress ? { onProgress: input.onProgress } : {}),
      },
      client,
      streams,
    );
  } finally {
    await client.close();
  }
}
