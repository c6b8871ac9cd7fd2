import type { DiscoveredTable } from '../intake/discovered-table.ts';
import { routeKey } from '../intake/route-table.ts';
import { normalizeAddress } from '../sender/normalize-address.ts';
import { type FileWorkspace, fileRoutes, type GatewayConfig, type WorkspaceConfig } from './schema.ts';
import { workspaceSchema } from './workspace-schema.ts';

/**
 * The workspaces the route table holds (docs/discovery.md): without `discovery`, the file's;
 * with it, the file's entries merged over the workspaces the service lists.
 *
 * - A workspace the service lists takes the settings of the file's entry with its identifier
 *   (archives, body, upload fields, scan and hold policies, …); where both name a field, the
 *   file wins: an entry that names `ingestEmail` or `whitelistIngestAddresses` overrides the
 *   service's, one that leaves them out follows the service.
 * - An entry whose identifier the service does not list is a workspace of the file's own,
 *   routed by its own `ingestEmail` (one without is reported and routes nothing).
 * - A document type the service lists with an `ingestEmail` routes that address to the
 *   workspace it belongs to, with that workspace's settings and allow-list, and its uploads
 *   carry `documentType`. One whose workspace the service does not name, or names but the
 *   gateway does not route, is reported and routes nothing.
 * - An address the service replaced routes to its workspace (and document type) until its
 *   grace ends.
 * When two routes claim one address, the file's wins over the service's, and a current
 * address over one in its grace; the loser is reported.
 */

/** Where a route came from: the file, the service, or an address the service replaced, in its grace. */
export type RouteSource = 'file' | 'service' | 'grace';

export type RoutedWorkspace = WorkspaceConfig & {
  readonly source: RouteSource;
  /** Set on the route of a document type's address: its uploads carry this `documentType`. */
  readonly addressOfDocumentType?: string;
};

export interface RoutedWorkspaces {
  readonly routes: readonly RoutedWorkspace[];
  /** Entries or addresses left out, each said once in words. */
  readonly problems: readonly string[];
}

export function routedWorkspaces(
  config: Pick<GatewayConfig, 'workspaces' | 'discovery'>,
  table: DiscoveredTable | null,
  now: number,
): RoutedWorkspaces {
  if (config.discovery === undefined) {
    return {
      routes: fileRoutes(config).map((workspace) => ({ ...workspace, source: 'file' })),
      problems: [],
    };
  }
  const problems: string[] = [];
  const routes: RoutedWorkspace[] = [];
  const claimed = new Map<string, RoutedWorkspace>();
  const add = (route: RoutedWorkspace) => {
    const address = normalizeAddress(route.ingestEmail);
    if (address === null) {
      problems.push(`${owner(route)}: ${JSON.stringify(route.ingestEmail)} is not an address`);
      return;
    }
    const key = routeKey(address);
    const holder = claimed.get(key);
    if (holder !== undefined) {
      problems.push(
        `${route.ingestEmail} (${route.source}, ${owner(route)}) is not routed: ` +
          `it is the address of ${owner(holder)} (${holder.source})`,
      );
      return;
    }
    const routed = { ...route, ingestEmail: address.address };
    claimed.set(key, routed);
    routes.push(routed);
  };
  const listed = new Map((table?.workspaces ?? []).map((workspace) => [workspace.identifier, workspace]));
  const entries = new Map<string, FileWorkspace>();
  for (const entry of config.workspaces)
    if (!entries.has(entry.identifier)) entries.set(entry.identifier, entry);

  // The file's own workspaces first, then its overrides of listed ones: the file wins an address.
  for (const entry of config.workspaces) {
    if (listed.has(entry.identifier)) continue;
    if (entry.ingestEmail === undefined) {
      problems.push(
        `workspace ${entry.identifier}: the service does not list it and the entry names no ingestEmail`,
      );
      continue;
    }
    add({ ...entry, ingestEmail: entry.ingestEmail, source: 'file' });
  }
  // The workspaces the service lists, with their settings: they take replaced addresses.
  const merged = new Map<string, WorkspaceConfig>();
  for (const service of table?.workspaces ?? []) {
    const entry = entries.get(service.identifier) ?? defaults(service.identifier);
    const ingestEmail = entry.ingestEmail ?? service.ingestEmail;
    const whitelistIngestAddresses =
      entry.whitelistIngestAddresses !== undefined
        ? entry.whitelistIngestAddresses
        : service.whitelistIngestAddresses;
    // A workspace without an address of its own still takes its document types' mail.
    const workspace: WorkspaceConfig = { ...entry, ingestEmail: ingestEmail ?? '', whitelistIngestAddresses };
    merged.set(service.identifier, workspace);
    if (ingestEmail === null) continue;
    add({ ...workspace, source: entry.ingestEmail === undefined ? 'service' : 'file' });
  }
  const documentTypeRoute = (
    documentType: string,
    workspace: string,
    ingestEmail: string,
    source: RouteSource,
  ) => {
    // A type of a workspace the service lists, or of one of the file's own.
    const settings =
      merged.get(workspace) ??
      routes.find((route) => route.identifier === workspace && route.addressOfDocumentType === undefined);
    if (settings === undefined) {
      problems.push(
        `document type ${documentType}: ${ingestEmail} is not routed: its workspace ${workspace} is not routed here`,
      );
      return;
    }
    add({ ...settings, ingestEmail, addressOfDocumentType: documentType, source });
  };
  for (const type of table?.documentTypes ?? []) {
    if (type.ingestEmail === null) continue;
    if (type.workspace === null) {
      problems.push(
        `document type ${type.identifier}: ${type.ingestEmail} is not routed: the service does not say which workspace the type belongs to`,
      );
      continue;
    }
    documentTypeRoute(type.identifier, type.workspace, type.ingestEmail, 'service');
  }
  for (const retired of table?.retired ?? []) {
    if (retired.until <= now) continue;
    if (retired.documentType !== null) {
      documentTypeRoute(retired.documentType, retired.workspace, retired.address, 'grace');
      continue;
    }
    const workspace = merged.get(retired.workspace);
    if (workspace === undefined) continue;
    add({ ...workspace, ingestEmail: retired.address, source: 'grace' });
  }
  return { routes, problems };
}

/** How a problem names a route: its workspace, and its document type when it is one's address. */
function owner(route: RoutedWorkspace): string {
  return route.addressOfDocumentType === undefined
    ? `workspace ${route.identifier}`
    : `document type ${route.addressOfDocumentType} of workspace ${route.identifier}`;
}

/** A listed workspace's settings when the file has no entry for it: the defaults. */
function defaults(identifier: string): FileWorkspace {
  return workspaceSchema.parse({ identifier });
}
