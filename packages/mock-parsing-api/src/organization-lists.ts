import type { IncomingMessage, ServerResponse } from 'node:http';
import * as z from 'zod';
import { authenticate } from './authenticate.ts';
import type { MockContext } from './mock-context.ts';
import { clientError } from './request-error.ts';
import { respond } from './respond.ts';

/**
 * `GET /v3/workspaces?organization=…` and `GET /v3/document_types?organization=…` (README.md,
 * "Organization lists"): everything of the organization (all of the key's when no
 * `organization` is given). The answer is the Django REST framework limit/offset page
 * `{count, next, previous, results}`, paged by `limit` and `offset` or by the mock's
 * `pageSize`, with absolute `next`/`previous` links; or, with `shape: 'bare'`, the bare list
 * of all of them, the other shape a client must read. How it answers is set at creation
 * (createMockApi's `organizationLists`) or while running (`PATCH /_mock/settings`).
 */

const shape = z.enum(['page', 'bare']);
const pageSize = z.int().min(1).max(1000).nullable();

export const organizationListSettingsSchema = z.strictObject({
  /** `page` (default): the limit/offset page; `bare`: the bare list, no paging. */
  shape: shape.default('page'),
  /** Results per page when the request gives no `limit`; null (default): all on one page. */
  pageSize: pageSize.default(null),
});

export const organizationListChangeSchema = z.strictObject({
  shape: shape.optional(),
  pageSize: pageSize.optional(),
});

export type OrganizationListSettings = z.output<typeof organizationListSettingsSchema>;
export type OrganizationListSettingsInput = z.input<typeof organizationListSettingsSchema>;

export function changeOrganizationListSettings(
  current: OrganizationListSettings,
  change: unknown,
): OrganizationListSettings {
  const parsed = organizationListChangeSchema.parse(change);
  return {
    shape: parsed.shape ?? current.shape,
    pageSize: parsed.pageSize === undefined ? current.pageSize : parsed.pageSize,
  };
}

/** The limit/offset paginator's largest `limit`, as a DRF view caps it. */
const MAX_LIMIT = 1000;

export const ORGANIZATION_LIST_PATHS = {
  '/v3/workspaces': 'workspaces',
  '/v3/document_types': 'documentTypes',
} as const;

export type OrganizationList = (typeof ORGANIZATION_LIST_PATHS)[keyof typeof ORGANIZATION_LIST_PATHS];

/** Which list a path names (with or without the trailing slash), or undefined. */
export function matchOrganizationList(path: string): OrganizationList | undefined {
  const bare = path.length > 1 ? path.replace(/\/$/, '') : path;
  return Object.hasOwn(ORGANIZATION_LIST_PATHS, bare)
    ? ORGANIZATION_LIST_PATHS[bare as keyof typeof ORGANIZATION_LIST_PATHS]
    : undefined;
}

export function handleOrganizationList(
  context: MockContext,
  req: IncomingMessage,
  res: ServerResponse,
  list: OrganizationList,
  path: string,
  query: URLSearchParams,
  snakeCase: boolean,
): void {
  if (req.method !== 'GET') {
    respond(res, 405, clientError('method_not_allowed', `Method "${req.method ?? ''}" not allowed.`), {
      headers: { allow: 'GET' },
    });
    return;
  }
  const denied = authenticate(req.headers.authorization, context.apiKey);
  if (denied) {
    respond(res, 401, denied, { headers: { 'www-authenticate': 'Bearer' } });
    return;
  }
  const organization = query.get('organization');
  const matches: unknown[] =
    list === 'workspaces'
      ? context.workspaces
          .list()
          .filter((workspace) => organization === null || workspace.organization.identifier === organization)
      : context.documentTypes
          .list()
          .filter((type) => organization === null || type.organization === organization);
  const { shape, pageSize } = context.organizationLists;
  if (shape === 'bare') {
    respond(res, 200, matches, { snakeCase });
    return;
  }
  const limit = whole(query.get('limit'), 1, MAX_LIMIT) ?? pageSize ?? Math.max(1, matches.length);
  const offset = whole(query.get('offset'), 0, Number.MAX_SAFE_INTEGER) ?? 0;
  const link = (to: number | null) => (to === null ? null : pageLink(req, path, query, limit, to));
  respond(
    res,
    200,
    {
      count: matches.length,
      next: link(offset + limit < matches.length ? offset + limit : null),
      previous: link(offset > 0 ? Math.max(0, offset - limit) : null),
      results: matches.slice(offset, offset + limit),
    },
    { snakeCase },
  );
}

/** A query number in bounds; anything else is ignored, as DRF's paginator ignores it. */
function whole(raw: string | null, min: number, max: number): number | undefined {
  if (raw === null || !/^\d{1,15}$/.test(raw)) return undefined;
  const value = Number(raw);
  return value >= min ? Math.min(value, max) : undefined;
}

/** An absolute link to another page, as DRF writes it from the Host header. */
function pageLink(req: IncomingMessage, path: string, query: URLSearchParams, limit: number, offset: number) {
  const search = new URLSearchParams(query);
  search.set('limit', String(limit));
  if (offset === 0) search.delete('offset');
  else search.set('offset', String(offset));
  const target = `${path}?${search}`;
  return req.headers.host ? `http://${req.headers.host}${target}` : target;
}
