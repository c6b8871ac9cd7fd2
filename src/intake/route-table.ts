import { type ScanWorkspace, scanPolicyOf } from '../scan/scan-settings-schema.ts';
import { admissionPolicyKey } from '../sender/admission-policy.ts';
import type { AdmittingWorkspace } from '../sender/admit-sender.ts';
import { compileAllowList } from '../sender/compile-allow-list.ts';
import { type NormalizedAddress, normalizeAddress } from '../sender/normalize-address.ts';
import type { SenderAuthenticationMode, SenderWorkspace } from '../sender/sender-settings-schema.ts';
import { splitSubaddress } from '../sender/subaddress.ts';

/** What routing needs of a workspace: its ingest address, whom it admits and what a scan does to its mail. */
export interface RoutableWorkspace extends SenderWorkspace, ScanWorkspace {
  readonly ingestEmail: string;
  /**
   * Set when `ingestEmail` is a document type's address (discovery): mail to it goes to this
   * workspace and its uploads carry that `documentType`. Absent for the workspace's own address.
   */
  readonly addressOfDocumentType?: string;
}

/**
 * A recipient's workspace, the tag of its address when it was routed as a subaddress
 * (`inbox+invoices@…` → `invoices`; absent for an address without one), and the document
 * type whose address it is (absent for a workspace's own address).
 */
export type RoutedWorkspace<W extends SenderWorkspace = SenderWorkspace> = AdmittingWorkspace<W> & {
  readonly subaddress?: string;
  readonly documentType?: string;
};

export interface RouteTableOptions {
  /**
   * smtp.subaddressSeparator: `local+tag@domain` routes as `local@domain` when no ingest
   * address is `local+tag@domain` itself; null (the default here) reads no tags.
   */
  subaddressSeparator?: string | null;
}

export interface RouteTable<W extends RoutableWorkspace> {
  /** The workspace whose ingest address `recipient` is, or undefined (RCPT gets 550 5.1.1). */
  lookup(recipient: string): W | undefined;
  /** The same lookup with the workspace's compiled allow-list and the tag, for the sender check and the record. */
  route(recipient: string): RoutedWorkspace<W> | undefined;
  /**
   * Whether `recipient` is the postmaster of a domain the gateway serves (a domain of an
   * ingest address), or `Postmaster` without a domain: RFC 5321 4.5.1 and 4.1.1.3 require
   * both to be accepted. An ingest address named postmaster@ routes to its workspace instead.
   */
  isPostmaster(recipient: string): boolean;
}

/** The local part RFC 5321 4.5.1 reserves, compared without case. */
const POSTMASTER = 'postmaster';

/**
 * The key two addresses are the same ingest address under (docs/architecture.md, "RCPT: the
 * route lookup"): the
 * normalised domain (lower case, ASCII, no trailing dot) and the local part without case.
 * The schema uses it to refuse duplicates, so the table and the check always agree.
 */
export function routeKey(address: Pick<NormalizedAddress, 'local' | 'domain'>): string {
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
  options: RouteTableOptions = {},
): RouteTable<W> {
  const separator = options.subaddressSeparator ?? null;
  const routes = new Map<string, RoutedWorkspace<W>>();
  const domains = new Set<string>();
  for (const config of workspaces) {
    const address = normalizeAddress(config.ingestEmail);
    if (address === null) {
      throw new Error(
        `workspace ${config.identifier}: ${JSON.stringify(config.ingestEmail)} is not an address`,
      );
    }
    domains.add(address.domain);
    const key = routeKey(address);
    if (routes.has(key)) {
      throw new Error(`workspace ${config.identifier}: ${config.ingestEmail} is routed twice`);
    }
    routes.set(key, {
      config,
      admits: compileAllowList(config.whitelistIngestAddresses),
      // The scan policy is part of the one verdict too: a transaction's reply applies one.
      policy: JSON.stringify([admissionPolicyKey(config, defaultMode), scanPolicyOf(config)]),
      ...(config.addressOfDocumentType === undefined ? {} : { documentType: config.addressOfDocumentType }),
    });
  }

  /**
   * The address itself first: an ingest address that holds the separator (`team+ops@…`) is
   * routed as written. Then its base, compared as strictly as any address, with the tag.
   */
  function route(recipient: string): RoutedWorkspace<W> | undefined {
    const address = normalizeAddress(recipient);
    if (address === null) return undefined;
    const literal = routes.get(routeKey(address));
    if (literal !== undefined) return literal;
    const split = splitSubaddress(address.local, separator);
    if (split === null) return undefined;
    const base = routes.get(routeKey({ ...address, local: split.base }));
    // `inbox+@…` is `inbox@…` without a tag, as Postfix reads it.
    return base === undefined || split.tag === '' ? base : { ...base, subaddress: split.tag };
  }

  function isPostmaster(recipient: string): boolean {
    if (recipient.toLowerCase() === POSTMASTER) return true;
    const address = normalizeAddress(recipient);
    return address !== null && address.local.toLowerCase() === POSTMASTER && domains.has(address.domain);
  }

  return {
    lookup: (recipient) => route(recipient)?.config,
    route,
    isPostmaster,
  };
}
