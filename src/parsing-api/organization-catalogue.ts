import type { ApiResult } from './api-result.ts';
import { type ApiRequest, type ApiTransport, createApiTransport } from './api-transport.ts';
import { linkedPageRequest } from './document-list.ts';
import { camelizeKeys } from './document-schema.ts';
import type { WorkspaceClientOptions } from './workspace-client.ts';

/**
 * An organization's addresses as the service lists them (docs/discovery.md):
 * `GET /v3/workspaces?organization=…` and `GET /v3/document_types?organization=…`.
 *
 * Read without guessing. A list is the bare array or the Django REST framework page
 * `{count, next, previous, results}`, whose `next` (absolute, or relative to the page) is
 * followed to the end; keys may be camelCase or snake_case; a document type names its
 * workspace by identifier, as `{identifier}`, or not at all. Anything else (an error
 * status, no answer, a body that is not such a list, an item without an identifier, an
 * address that is not a string, a `next` to another origin, a page seen twice, an
 * identifier listed twice) makes the whole read fail with a CatalogueError: a list read in
 * part would look like workspaces deleted, and the gateway would refuse their mail.
 */

export interface CatalogueWorkspace {
  readonly identifier: string;
  /** null: the service gave the workspace no address (nothing routes to it). */
  readonly ingestEmail: string | null;
  /** null: any sender. */
  readonly whitelistIngestAddresses: readonly string[] | null;
}

export interface CatalogueDocumentType {
  readonly identifier: string;
  /** null: the type has no address of its own. */
  readonly ingestEmail: string | null;
  /** The workspace the type belongs to; null when the service does not say. */
  readonly workspace: string | null;
}

export interface Catalogue {
  readonly workspaces: readonly CatalogueWorkspace[];
  readonly documentTypes: readonly CatalogueDocumentType[];
}

export class CatalogueError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CatalogueError';
  }
}

export interface CatalogueClient {
  /** Both lists of the organization; rejects with a CatalogueError that says what went wrong. */
  read(organization: string): Promise<Catalogue>;
  /** Idempotent. */
  close(): Promise<void>;
}

/** Most pages one list may take: 1000 pages of the service's smallest page is past any organization. */
export const MAX_CATALOGUE_PAGES = 1000;

/**
 * 16 MiB per page: a Workspace carries its organization's theme and its collections, a few
 * KiB each, and a page of a few hundred of them is well over the uploader's 1 MiB.
 */
const MAX_PAGE_BYTES = 16 * 1024 * 1024;

export function createCatalogueClient(options: WorkspaceClientOptions): CatalogueClient {
  const transport = createApiTransport({ ...options, connections: 1, maxResponseBytes: MAX_PAGE_BYTES });
  return {
    async read(organization) {
      const workspaces = await readList(transport, '/v3/workspaces', organization, readWorkspace);
      const documentTypes = await readList(transport, '/v3/document_types', organization, readDocumentType);
      return { workspaces, documentTypes };
    },
    close: () => transport.close(),
  };
}

/** Every item of one list, following `next`; throws a CatalogueError for anything unreadable. */
export async function readList<T extends { identifier: string }>(
  transport: ApiTransport,
  path: string,
  organization: string,
  readItem: (item: Record<string, unknown>, where: string) => T,
  maxPages = MAX_CATALOGUE_PAGES,
): Promise<T[]> {
  const items: T[] = [];
  const seen = new Set<string>();
  const pages = new Set<string>();
  let request: ApiRequest = { method: 'GET', path, query: { organization } };
  for (let page = 1; ; page += 1) {
    const where = `GET ${transport.baseUrl}${request.path}?${new URLSearchParams(request.query)}`;
    pages.add(where);
    const { results, next } = readPage(await transport.request(request), where);
    results.forEach((raw, index) => {
      if (!isPlainObject(raw)) throw new CatalogueError(`${where}: item ${index} is not an object`);
      const item = readItem(camelizeKeys(raw) as Record<string, unknown>, `${where}: item ${index}`);
      if (seen.has(item.identifier)) {
        throw new CatalogueError(
          `${where}: ${item.identifier} is listed twice (the list changed while it was read)`,
        );
      }
      seen.add(item.identifier);
      items.push(item);
    });
    if (next === null) return items;
    if (page >= maxPages) throw new CatalogueError(`${where}: still a next page after ${maxPages} pages`);
    const following = linkedPageRequest(next, transport.baseUrl, request);
    if (following === undefined) {
      throw new CatalogueError(
        `${where}: next page ${JSON.stringify(next)} is not on the service's base URL`,
      );
    }
    const nextWhere = `GET ${transport.baseUrl}${following.path}?${new URLSearchParams(following.query)}`;
    if (pages.has(nextWhere)) throw new CatalogueError(`${where}: next page ${next} was read already`);
    request = following;
  }
}

/** The items and `next` link of one answer, or a CatalogueError saying what came instead. */
export function readPage(result: ApiResult, where: string): { results: unknown[]; next: string | null } {
  if (result.kind === 'network') throw new CatalogueError(`${where}: no answer: ${result.error.message}`);
  if (result.status < 200 || result.status > 299) {
    throw new CatalogueError(`${where}: ${result.status}${quote(result.body ?? result.bodyError)}`);
  }
  if (result.bodyError !== undefined)
    throw new CatalogueError(`${where}: ${result.status}: ${result.bodyError}`);
  const body = typeof result.body === 'string' ? parseJson(result.body) : result.body;
  if (Array.isArray(body)) return { results: body, next: null };
  if (!isPlainObject(body) || !Array.isArray(body.results)) {
    throw new CatalogueError(`${where}: ${result.status} but neither a list nor a page of results`);
  }
  const { next } = body;
  if (next !== undefined && next !== null && typeof next !== 'string') {
    throw new CatalogueError(`${where}: a page whose next is ${JSON.stringify(next)}`);
  }
  return { results: body.results, next: next === undefined || next === null || next === '' ? null : next };
}

export function readWorkspace(item: Record<string, unknown>, where: string): CatalogueWorkspace {
  const identifier = identifierOf(item, where);
  const rules = item.whitelistIngestAddresses;
  if (
    rules !== undefined &&
    rules !== null &&
    !(Array.isArray(rules) && rules.every((r) => typeof r === 'string'))
  ) {
    throw new CatalogueError(`${where} (${identifier}): whitelistIngestAddresses is not a list of strings`);
  }
  return {
    identifier,
    ingestEmail: addressOf(item, `${where} (${identifier})`),
    whitelistIngestAddresses: rules === undefined || rules === null ? null : (rules as string[]),
  };
}

export function readDocumentType(item: Record<string, unknown>, where: string): CatalogueDocumentType {
  const identifier = identifierOf(item, where);
  const { workspace } = item;
  let owner: string | null;
  if (workspace === undefined || workspace === null) owner = null;
  else if (typeof workspace === 'string' && workspace !== '') owner = workspace;
  else if (
    isPlainObject(workspace) &&
    typeof workspace.identifier === 'string' &&
    workspace.identifier !== ''
  )
    owner = workspace.identifier;
  else throw new CatalogueError(`${where} (${identifier}): workspace is ${JSON.stringify(workspace)}`);
  return { identifier, ingestEmail: addressOf(item, `${where} (${identifier})`), workspace: owner };
}

function identifierOf(item: Record<string, unknown>, where: string): string {
  const { identifier } = item;
  if (typeof identifier !== 'string' || identifier === '')
    throw new CatalogueError(`${where}: no identifier`);
  return identifier;
}

function addressOf(item: Record<string, unknown>, where: string): string | null {
  const address = item.ingestEmail;
  if (address === undefined || address === null || address === '') return null;
  if (typeof address !== 'string')
    throw new CatalogueError(`${where}: ingestEmail is ${JSON.stringify(address)}`);
  return address;
}

function quote(body: unknown): string {
  const text = typeof body === 'string' ? body : body === undefined ? '' : JSON.stringify(body);
  const trimmed = text.trim().slice(0, 200);
  return trimmed === '' ? '' : `: ${trimmed}`;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
