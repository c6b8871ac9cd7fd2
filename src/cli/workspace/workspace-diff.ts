import { routeKey } from '../../intake/route-table.ts';
import { normalizeAddress, normalizeDomain } from '../../sender/normalize-address.ts';

/**
 * Where a configured workspace and the service's copy of it disagree, for `workspace sync`.
 * Only the two fields the gateway itself acts on are compared, each in the form the gateway
 * compares addresses (docs/architecture.md, "RCPT: the route lookup", "The sender check"):
 * `Invoices@Ingest.Example.` and `invoices@ingest.example` are one ingest address, an allow-list is
 * a set of rules whose order and case do not matter, and absent, null and [] all mean "any sender".
 * Pure.
 */

export interface LocalWorkspace {
  readonly identifier: string;
  /** Absent: the entry takes the service's address (discovery); nothing to compare. */
  readonly ingestEmail?: string | undefined;
  readonly whitelistIngestAddresses?: readonly string[] | null | undefined;
}

export interface RemoteWorkspace {
  readonly ingestEmail?: string | null | undefined;
  readonly whitelistIngestAddresses?: readonly string[] | null | undefined;
}

export interface WorkspaceComparison {
  /** Undefined when both name the same address. `service` is null when the service has none. */
  readonly ingestEmail?: { readonly local: string; readonly service: string | null };
  /** Undefined when both admit the same senders; null stands for "any sender". */
  readonly whitelistIngestAddresses?: {
    readonly local: readonly string[] | null;
    readonly service: readonly string[] | null;
    /** Rules only the configuration has, and only the service has, as written. */
    readonly onlyLocal: readonly string[];
    readonly onlyService: readonly string[];
  };
}

export function compareWorkspace(
  local: LocalWorkspace,
  remote: RemoteWorkspace,
  /**
   * With discovery an entry's absent allow-list means "the service's", not "any sender":
   * only an allow-list the entry names overrides the service's, and is compared.
   */
  discovery = false,
): WorkspaceComparison {
  const comparison: {
    ingestEmail?: WorkspaceComparison['ingestEmail'];
    whitelistIngestAddresses?: WorkspaceComparison['whitelistIngestAddresses'];
  } = {};
  const service = remote.ingestEmail ?? null;
  const localEmail = local.ingestEmail;
  if (localEmail !== undefined && (service === null || addressKey(service) !== addressKey(localEmail))) {
    comparison.ingestEmail = { local: localEmail, service };
  }
  if (discovery && local.whitelistIngestAddresses === undefined) return comparison;
  const localRules = anySender(local.whitelistIngestAddresses);
  const serviceRules = anySender(remote.whitelistIngestAddresses);
  const localKeys = new Set((localRules ?? []).map(ruleKey));
  const serviceKeys = new Set((serviceRules ?? []).map(ruleKey));
  const onlyLocal = (localRules ?? []).filter((rule) => !serviceKeys.has(ruleKey(rule)));
  const onlyService = (serviceRules ?? []).filter((rule) => !localKeys.has(ruleKey(rule)));
  if (onlyLocal.length > 0 || onlyService.length > 0) {
    comparison.whitelistIngestAddresses = {
      local: localRules,
      service: serviceRules,
      onlyLocal,
      onlyService,
    };
  }
  return comparison;
}

export function inSync(comparison: WorkspaceComparison): boolean {
  return comparison.ingestEmail === undefined && comparison.whitelistIngestAddresses === undefined;
}

/** null for "any sender": absent, null and [] alike. */
function anySender(rules: readonly string[] | null | undefined): readonly string[] | null {
  return rules === undefined || rules === null || rules.length === 0 ? null : rules;
}

/** The route table's key; an address that does not parse is compared as written, in lower case. */
function addressKey(address: string): string {
  const normalized = normalizeAddress(address.trim());
  return normalized === null ? address.trim().toLowerCase() : routeKey(normalized);
}

/**
 * A rule in the form the allow-list matches it: the local pattern without case (minimatch
 * runs with nocase), the domain in ASCII without a trailing dot; a wildcard domain only
 * lower-cased, as the compiler treats it.
 */
export function ruleKey(rule: string): string {
  const trimmed = rule.trim();
  const at = trimmed.lastIndexOf('@');
  if (at < 0) return trimmed.toLowerCase();
  const local = trimmed.slice(0, at).toLowerCase();
  const domain = trimmed.slice(at + 1);
  const withoutRoot = (domain.endsWith('.') ? domain.slice(0, -1) : domain).toLowerCase();
  const ascii = /[*?[]/.test(domain) ? withoutRoot : (normalizeDomain(domain) ?? withoutRoot);
  return `${local}@${ascii}`;
}
