import type { WorkspaceClient } from '../../parsing-api/workspace-client.ts';
import { type CommandStreams, EXIT_OK, formatWorkspace, reportServiceError } from './command-io.ts';

/** `ingest-gateway workspace get ID`: the Workspace as the service has it, as JSON. */
export async function getWorkspaceCommand(
  options: { identifier: string },
  client: WorkspaceClient,
  streams: CommandStreams,
): Promise<number> {
  try {
    const workspace = await client.getWorkspace(options.identifier);
    streams.stdout.write(formatWorkspace(workspace));
    return EXIT_OK;
  } catch (caught) {
    return reportServiceError(caught, streams.stderr);
  }
}
