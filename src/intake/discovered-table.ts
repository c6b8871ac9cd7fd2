import * as z from 'zod/mini';
import type {
  Catalogue,
  CatalogueDocumentType,
  CatalogueWorkspace,
} from '../parsing-api/organization-catalogue.ts';
import type { RedisClient } from '../redis/connections.ts';
import { normalizeAddress } from '../sender/normalize-address.ts';
import { routeKey } from './route-table.ts';

/**
 * The route table read from the parsing service (docs/discovery.md): the organization's
 * workspaces and document types with their ingest addresses, and the addresses the service
 * replaced, each routed to its workspace until its grace ends. One JSON value in Redis,
 * written by the one instance that read the service, read by every instance; so a gateway
 * that starts while the service is away routes by the last table read whole.
 */

export interface RetiredAddress {
  readonly address: string;
  readonly workspace: string;
  /** The document type whose address it was; null for a workspace's. */
  readonly documentType: string | null;
  /** Epoch ms after which it no longer routes. */
  readonly until: number;
}

export interface DiscoveredTable {
  readonly organization: string;
  /** Epoch ms of the read of the service this table holds. */
  readonly refreshedAt: number;
  readonly workspaces: readonly CatalogueWorkspace[];
  readonly documentTypes: readonly CatalogueDocumentType[];
  readonly retired: readonly RetiredAddress[];
}

const tableSchema = z.object({
  organization: z.string(),
  refreshedAt: z.number(),
  workspaces: z.array(
    z.object({
      identifier: z.string(),
      ingestEmail: z.nullable(z.string()),
      whitelistIngestAddresses: z.nullable(z.array(z.string())),
    }),
  ),
  documentTypes: z.array(
    z.object({
      identifier: z.string(),
      ingestEmail: z.nullable(z.string()),
      workspace: z.nullable(z.string()),
    }),
  ),
  retired: z.array(
    z.object({
      address: z.string(),
      workspace: z.string(),
      documentType: z.nullable(z.string()),
      until: z.number(),
    }),
  ),
});

/** What one refresh changed, for the log: one line per address added, removed or replaced. */
export type TableChange =
  | { change: 'added'; workspace: string; documentType: string | null; address: string }
  | { change: 'removed'; workspace: string; documentType: string | null; address: string }
  | {
      change: 'rotated';
      workspace: string;
      documentType: string | null;
      address: string;
      previous: string;
      /** ISO time until which `previous` still routes; absent when rotationGrace is 0. */
      graceUntil?: string;
    }
  | { change: 'allow-list'; workspace: string; whitelistIngestAddresses: readonly string[] | null }
  | { change: 'grace-ended'; workspace: string; documentType: string | null; address: string };

interface Routed {
  workspace: string;
  documentType: string | null;
  address: string;
}

/**
 * The addresses a catalogue routes: each workspace's, and each document type's that names its
 * workspace (one that does not is not routed: src/config/routed-workspaces.ts says so), keyed
 * by what owns the address.
 */
function routedOf(workspaces: readonly CatalogueWorkspace[], types: readonly CatalogueDocumentType[]) {
  const routed = new Map<string, Routed>();
  for (const workspace of workspaces) {
    if (workspace.ingestEmail === null) continue;
    routed.set(`workspace ${workspace.identifier}`, {
      workspace: workspace.identifier,
      documentType: null,
      address: workspace.ingestEmail,
    });
  }
  for (const type of types) {
    if (type.ingestEmail === null || type.workspace === null) continue;
    routed.set(`document type ${type.identifier}`, {
      workspace: type.workspace,
      documentType: type.identifier,
      address: type.ingestEmail,
    });
  }
  return routed;
}

function sameAddress(a: string, b: string): boolean {
  const left = normalizeAddress(a);
  const right = normalizeAddress(b);
  return left !== null && right !== null ? routeKey(left) === routeKey(right) : a === b;
}

/**
 * The table after a read of the service: the catalogue's addresses, plus each address the
 * service replaced since `previous` (kept for `graceMs`), plus the earlier replaced ones whose
 * grace has not ended and whose workspace (or document type, still of that workspace) still
 * exists. A table of another organization is
 * not carried over.
 */
export function nextTable(
  previous: DiscoveredTable | null,
  catalogue: Catalogue,
  options: { organization: string; now: number; graceMs: number },
): { table: DiscoveredTable; changes: TableChange[] } {
  const { organization, now, graceMs } = options;
  const before = previous?.organization === organization ? previous : null;
  const changes: TableChange[] = [];
  const old = routedOf(before?.workspaces ?? [], before?.documentTypes ?? []);
  const current = routedOf(catalogue.workspaces, catalogue.documentTypes);
  const existing = new Set(catalogue.workspaces.map((workspace) => workspace.identifier));
  // A document type's replaced address keeps routing while the type stays with its workspace.
  const typeOwners = new Map(catalogue.documentTypes.map((type) => [type.identifier, type.workspace]));
  const owned = (entry: RetiredAddress) =>
    entry.documentType === null
      ? existing.has(entry.workspace)
      : typeOwners.get(entry.documentType) === entry.workspace;
  const retired: RetiredAddress[] = [];
  const currentAddresses = [...current.values()].map((routed) => routed.address);
  const stillCurrent = (address: string) => currentAddresses.some((other) => sameAddress(other, address));

  for (const [key, now_] of current) {
    const was = old.get(key);
    if (was === undefined) {
      if (before !== null) changes.push({ change: 'added', ...now_ });
      continue;
    }
    if (sameAddress(was.address, now_.address)) continue;
    const until = now + graceMs;
    if (graceMs > 0 && !stillCurrent(was.address)) {
      retired.push({ address: was.address, workspace: was.workspace, documentType: was.documentType, until });
    }
    changes.push({
      change: 'rotated',
      ...now_,
      previous: was.address,
      ...(graceMs > 0 ? { graceUntil: new Date(until).toISOString() } : {}),
    });
  }
  for (const [key, was] of old) {
    if (!current.has(key)) changes.push({ change: 'removed', ...was });
  }
  for (const earlier of before?.retired ?? []) {
    const keep = earlier.until > now && owned(earlier) && !stillCurrent(earlier.address);
    if (keep && !retired.some((entry) => sameAddress(entry.address, earlier.address))) retired.push(earlier);
    else if (!keep) {
      changes.push({
        change: 'grace-ended',
        workspace: earlier.workspace,
        documentType: earlier.documentType,
        address: earlier.address,
      });
    }
  }
  const rulesBefore = new Map(
    (before?.workspaces ?? []).map((w) => [w.identifier, w.whitelistIngestAddresses]),
  );
  for (const workspace of catalogue.workspaces) {
    if (!rulesBefore.has(workspace.identifier)) continue;
    const was = rulesBefore.get(workspace.identifier) ?? null;
    if (JSON.stringify(was) !== JSON.stringify(workspace.whitelistIngestAddresses)) {
      changes.push({
        change: 'allow-list',
        workspace: workspace.identifier,
        whitelistIngestAddresses: workspace.whitelistIngestAddresses,
      });
    }
  }
  return {
    table: {
      organization,
      refreshedAt: now,
      workspaces: catalogue.workspaces,
      documentTypes: catalogue.documentTypes,
      retired,
    },
    changes,
  };
}

/** The table stored in Redis, or null when there is none (or it is of another organization, or unreadable). */
export function parseTable(text: string | null, organization: string): DiscoveredTable | null {
  if (text === null) return null;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return null;
  }
  const parsed = tableSchema.safeParse(json);
  if (!parsed.success || parsed.data.organization !== organization) return null;
  return parsed.data;
}

/** Reads the shared table's JSON text (null when there is none). */
export function readTableText(redis: RedisClient, key: string): Promise<string | null> {
  return redis.get(key);
}

/** Stores the table for every instance. It is kept until replaced: never expires. */
export async function writeTable(redis: RedisClient, key: string, table: DiscoveredTable): Promise<void> {
  await redis.set(key, JSON.stringify(table));
}
