import type { WorkspaceClient } from './workspace-client.ts';

/** What adding a rule to a workspace's allow-list on the service came to. */
export type AllowListAddition =
  /** PATCHed: `rules` is the list the service answered with. */
  | { kind: 'added'; rules: string[] }
  /** The service's list already named the rule: nothing was sent. */
  | { kind: 'present'; rules: string[] }
  /**
   * The service's list is empty, so the workspace takes mail from any sender: a list of one
   * rule would shut out every other sender, so nothing is sent.
   */
  | { kind: 'open' };

/** Times the list may change between the two reads before a PATCH gives up. */
const MAX_READS = 5;

export class AllowListChangedError extends Error {
  constructor(identifier: string) {
    super(
      `the allow-list of workspace ${identifier} on the parsing service kept changing while it was read; try again`,
    );
    this.name = 'AllowListChangedError';
  }
}

/**
 * Adds `rule` to the workspace's `whitelistIngestAddresses` on the parsing service, keeping
 * every rule it has. The service's PATCH replaces the whole list and offers no conditional
 * request (no ETag, no If-Match), so the list is read twice and sent only when both reads
 * agree: a change made between them is read again rather than overwritten. Changes by other
 * gateway instances are kept apart by the caller (one change per workspace at a time); what
 * is left is a change by someone else in the moment between the second read and the PATCH.
 * Errors are the client's WorkspaceApiError.
 */
export async function addAllowListRule(
  client: WorkspaceClient,
  identifier: string,
  rule: string,
): Promise<AllowListAddition> {
  let seen = listOf(await client.getWorkspace(identifier));
  for (let read = 1; read < MAX_READS; read++) {
    if (seen.length === 0) return { kind: 'open' };
    if (seen.some((existing) => existing.toLowerCase() === rule.toLowerCase())) {
      return { kind: 'present', rules: seen };
    }
    const again = listOf(await client.getWorkspace(identifier));
    if (sameList(seen, again)) {
      const updated = await client.updateWorkspace(identifier, { whitelistIngestAddresses: [...seen, rule] });
      return { kind: 'added', rules: listOf(updated) };
    }
    seen = again;
  }
  throw new AllowListChangedError(identifier);
}

function listOf(workspace: { whitelistIngestAddresses?: string[] | null | undefined }): string[] {
  return workspace.whitelistIngestAddresses ?? [];
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((rule, index) => rule === b[index]);
}
