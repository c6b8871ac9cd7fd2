import * as z from 'zod/mini';
import type { ApiResult } from './api-result.ts';
import { type ApiTransportOptions, createApiTransport } from './api-transport.ts';
import { requestErrorSchema } from './document-schema.ts';
import { requestErrorDetail } from './workspace-client.ts';

/**
 * The parsing API's resthook calls (docs/parsing-api.md, "Parse events"): the organization
 * of a workspace with its `resthookSignatureKey` (the key the service signs events with),
 * `POST /v3/resthook_subscriptions`, the activation that confirms the handshake, and the
 * removal of a subscription. Each failure is a ResthookApiError saying what the service
 * answered; the key is never in one.
 */

export type ResthookClientOptions = Pick<
  ApiTransportOptions,
  'baseUrl' | 'apiKey' | 'timeoutMs' | 'allowInsecureHttp' | 'logger'
>;

export interface SigningOrganization {
  identifier: string;
  resthookSignatureKey: string;
}

export interface SubscriptionRequest {
  targetUrl: string;
  event: string;
  workspace: string;
}

export interface ResthookClient {
  /** The organization the workspace belongs to, with the key its events are signed with. */
  organizationOf(workspace: string): Promise<SigningOrganization>;
  /** Creates the subscription (the service sends its handshake meanwhile); its identifier. */
  subscribe(request: SubscriptionRequest): Promise<string>;
  /** Confirms the handshake that carried `secret`. */
  activate(secret: string): Promise<void>;
  /**
   * Whether the subscription still delivers: false when the service no longer has it or
   * deactivated it (after failed deliveries), with its reason when it gave one.
   */
  status(identifier: string): Promise<{ active: true } | { active: false; reason: string }>;
  /** Removes a subscription; one the service no longer has counts as removed. */
  unsubscribe(identifier: string): Promise<void>;
  close(): Promise<void>;
}

export class ResthookApiError extends Error {
  override readonly name = 'ResthookApiError';
}

const SUBSCRIPTIONS_PATH = '/v3/resthook_subscriptions';

const workspaceOrganizationSchema = z.looseObject({
  organization: z.looseObject({
    identifier: z.string().check(z.minLength(1)),
    resthookSignatureKey: z.string().check(z.minLength(1)),
  }),
});

const subscriptionSchema = z.looseObject({ identifier: z.union([z.string(), z.number()]) });

const subscriptionStateSchema = z.looseObject({
  active: z.optional(z.boolean()),
  autoDeactivatedReason: z.nullish(z.string()),
});

export function createResthookClient(options: ResthookClientOptions): ResthookClient {
  const transport = createApiTransport({ ...options, connections: 2 });
  const where = (method: string, path: string) => `${method} ${transport.baseUrl}${path}`;

  return {
    async organizationOf(workspace) {
      const path = `/v3/workspaces/${encodeURIComponent(workspace)}`;
      const body = expectOk(await transport.request({ method: 'GET', path }), where('GET', path));
      const parsed = workspaceOrganizationSchema.safeParse(body);
      if (!parsed.success) {
        throw new ResthookApiError(
          `${where('GET', path)}: the Workspace names no organization with a resthookSignatureKey`,
        );
      }
      const { identifier, resthookSignatureKey } = parsed.data.organization;
      return { identifier, resthookSignatureKey };
    },
    async subscribe({ targetUrl, event, workspace }) {
      const result = await transport.request({
        method: 'POST',
        path: SUBSCRIPTIONS_PATH,
        body: { json: { targetUrl, event, workspace, version: 'v3' } },
      });
      const body = expectOk(result, where('POST', SUBSCRIPTIONS_PATH));
      const parsed = subscriptionSchema.safeParse(body);
      if (!parsed.success) {
        throw new ResthookApiError(`${where('POST', SUBSCRIPTIONS_PATH)}: the answer names no subscription`);
      }
      return String(parsed.data.identifier);
    },
    async activate(secret) {
      const path = `${SUBSCRIPTIONS_PATH}/activate`;
      const result = await transport.request({ method: 'POST', path, headers: { 'x-hook-secret': secret } });
      expectOk(result, where('POST', path));
    },
    async status(identifier) {
      const path = `${SUBSCRIPTIONS_PATH}/${encodeURIComponent(identifier)}`;
      const result = await transport.request({ method: 'GET', path });
      if (result.kind === 'response' && result.status === 404) {
        return { active: false, reason: 'the service no longer has it' };
      }
      const parsed = subscriptionStateSchema.safeParse(expectOk(result, where('GET', path)));
      if (!parsed.success || parsed.data.active !== false) return { active: true };
      return { active: false, reason: parsed.data.autoDeactivatedReason ?? 'the service deactivated it' };
    },
    async unsubscribe(identifier) {
      const path = `${SUBSCRIPTIONS_PATH}/${encodeURIComponent(identifier)}`;
      const result = await transport.request({ method: 'DELETE', path });
      if (result.kind === 'response' && result.status === 404) return;
      expectOk(result, where('DELETE', path));
    },
    close: () => transport.close(),
  };
}

/** The body of a 2xx answer; a ResthookApiError saying what came instead. */
function expectOk(result: ApiResult, where: string): unknown {
  if (result.kind === 'network') throw new ResthookApiError(`${where}: no answer: ${result.error.message}`);
  if (result.status >= 200 && result.status < 300) return result.body;
  const requestError = requestErrorSchema.safeParse(result.body);
  const detail = requestError.success ? `: ${requestErrorDetail(requestError.data)}` : '';
  throw new ResthookApiError(`${where}: ${result.status}${detail}`);
}
