import { WorkspaceApiError } from '../../parsing-api/workspace-client.ts';

/**
 * What the `workspace` commands share: where they write, and what their exit codes mean.
 * The commands take their streams and their client as arguments and return the exit code,
 * so tests call them directly; only src/cli.ts sets `process.exitCode`.
 */

/** process.stdout, or a test's buffer. */
export interface Output {
  write(text: string): unknown;
}

export interface CommandStreams {
  /** The result: JSON for get and update, the report for sync. */
  stdout: Output;
  /** Why a command did not do what was asked. */
  stderr: Output;
}

export const EXIT_OK = 0;
/** The service refused the request (its RequestError detail is printed) or did not answer. */
export const EXIT_REFUSED = 1;
/** A usage error or a value refused locally: nothing was sent. */
export const EXIT_USAGE = 2;

/**
 * Prints a WorkspaceApiError and returns EXIT_REFUSED; anything else is a bug and is
 * rethrown for the composition root to report.
 */
export function reportServiceError(caught: unknown, stderr: Output): number {
  if (!(caught instanceof WorkspaceApiError)) throw caught;
  stderr.write(`the service refused: ${caught.message}\n`);
  return EXIT_REFUSED;
}

/**
 * A Workspace as the commands print it: indented JSON, one trailing newline, with the
 * organization's `resthookSignatureKey` redacted. It is a secret of the service
 * (docs/parsing-api.md, "Workspaces"), and a terminal, a CI log or a pasted snippet is no place for it.
 */
export function formatWorkspace(workspace: Readonly<Record<string, unknown>>): string {
  const organization = workspace.organization;
  const printed =
    isRecord(organization) && typeof organization.resthookSignatureKey === 'string'
      ? { ...workspace, organization: { ...organization, resthookSignatureKey: '[redacted]' } }
      : workspace;
  return `${JSON.stringify(printed, null, 2)}\n`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
