import type { WorkspaceClient } from '../../parsing-api/workspace-client.ts';
import {
  type CommandStreams,
  EXIT_OK,
  EXIT_USAGE,
  formatWorkspace,
  reportServiceError,
} from './command-io.ts';
import { parseUpdateOptions, type UpdateOptionValues } from './update-options.ts';

/**
 * `ingest-gateway workspace update ID --name … --whitelist …`: one PATCH with exactly the
 * fields given, then the updated Workspace as JSON. Every value is checked first
 * (update-options.ts); one bad value and nothing is sent.
 */
export async function updateWorkspaceCommand(
  options: { identifier: string; values: UpdateOptionValues },
  client: WorkspaceClient,
  streams: CommandStreams,
): Promise<number> {
  const parsed = parseUpdateOptions(options.values);
  if (!parsed.ok) {
    for (const problem of parsed.problems) streams.stderr.write(`${problem}\n`);
    streams.stderr.write('nothing was sent\n');
    return EXIT_USAGE;
  }
  try {
    const workspace = await client.updateWorkspace(options.identifier, parsed.update);
    streams.stdout.write(formatWorkspace(workspace));
    return EXIT_OK;
  } catch (caught) {
    return reportServiceError(caught, streams.stderr);
  }
}
