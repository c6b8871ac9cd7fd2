import { admissionPolicyKey } from '../sender/admission-policy.ts';
import type { AdmittingWorkspace } from '../sender/admit-sender.ts';
import { compileAllowList } from '../sender/compile-allow-list.ts';
import { type NormalizedAddress, normalizeAddress } from '../sender/normalize-address.ts';
import type { SenderAuthenticationMode, SenderWorkspace } from '../sender/sender-settings-schema.ts';

/** What routing needs of a workspace: its ingest address and whom it admits. */
export interface RoutableWorkspace extends SenderWorkspace {
  readonly ingestEmail: string;
}

export interface RouteTable<W extends RoutableWorkspace> {
  /** The workspace whose ingest address `recipient` is, or undefined (RCPT gets 550 5.1.1). */
  lookup(recipient: string): W | undefined;
  /** The same lookup with the workspace's compiled allow-list, for the sender check. */
  route(recipient: string): AdmittingWorkspace<W> | undefined;
}

/**
 * The key two addresses are the same ingest address under (DESIGN.md, ingest rule 1): the
 * normalised domain (lower case, ASCII, no trailing dot) and the local part without case.
 * The schema uses it to refuse duplicates, so the table and the check always agree.
 */
export function routeKey(address: NormalizedAddress): string {
  return `${address.local.toLowerCase()}@${address.domain}`;
}

/**
 * Route envelope recipients to workspaces. Built from validated configuration; a duplicate
 * address is still refused here, as a table built from anything else must not pick one
 * silently.
 */
export function createRouteTable<W extends RoutableWorkspace>(
  workspaces: readonly W[],
  /** auth.senderAuthentication: the mode of workspaces that name none. */
  defaultMode: SenderAuthenticationMode,
): RouteTable<W> {
  const routes = new Map<string, AdmittingWorkspace<W>>();
  for (const config of workspaces) {
    const address = normalizeAddress(config.ingestEmail);
    if (address === null) {
      throw new Error(
        `workspace ${config.identifier}: ${JSON.stringify(config.ingestEmail)} is not an address`,
      );
    }
    const key = routeKey(address);
    if (routes.has(key)) {
      throw new Error(`workspace ${config.identifier}: ${config.ingestEmail} is routed twice`);
    }
    routes.set(key, {
      config,
      admits: compileAllowList(config.whitelistIngestAddresses),
      policy: admissionPolicyKey(config, defaultMode),
    });
  }

  function route(recipient: string): AdmittingWorkspace<W> | undefined {
    const address = normalizeAddress(recipient);
    return address === null ? undefined : routes.get(routeKey(address));
  }

  return {
    lookup: (recipient) => route(recipient)?.config,
    route,
  };
}
