import { randomBytes } from 'node:crypto';
import { z } from 'zod';

/**
 * Resthook subscriptions (parsing-api-facts.md, "Events"): created pending by
 * `POST /v3/resthook_subscriptions` `{targetUrl, event, workspace | organization,
 * version: "v3"}`, each with a secret the mock sends to the target as `X-Hook-Secret`, and
 * active once the subscriber posts that secret back to `/activate`. Only active
 * subscriptions receive events.
 */

export const RESTHOOK_EVENTS = [
  'document.parse.succeeded',
  'document.parse.failed',
  'document.parse.completed',
  // Accepted for a subscription; the mock never sends it (nobody reviews its documents).
  'document.rejected',
] as const;

export type ResthookEvent = (typeof RESTHOOK_EVENTS)[number];

const identifier = z.string().trim().min(1).max(255);

export const subscriptionRequestSchema = z
  .object({
    targetUrl: z.url({ protocol: /^https?$/, error: 'Enter a valid http or https URL.' }),
    event: z.enum(RESTHOOK_EVENTS),
    workspace: identifier.nullish(),
    organization: identifier.nullish(),
    /** The facts file sends "v3"; the mock takes its absence as "v3" too. */
    version: z.literal('v3').default('v3'),
  })
  .superRefine((request, issues) => {
    const scopes = [request.workspace, request.organization].filter((scope) => scope != null);
    if (scopes.length !== 1) {
      issues.addIssue({ code: 'custom', message: 'Give exactly one of workspace and organization.' });
    }
  });

export type SubscriptionRequest = z.output<typeof subscriptionRequestSchema>;

export interface ResthookSubscription {
  identifier: string;
  targetUrl: string;
  event: ResthookEvent;
  workspace: string | null;
  organization: string | null;
  version: 'v3';
  active: boolean;
  createdDt: string;
}

export interface SubscriptionStore {
  /** A pending subscription, and the secret the handshake carries. */
  add(request: SubscriptionRequest, now: Date): { subscription: ResthookSubscription; secret: string };
  /** Activates the subscription of this secret (again: no change); undefined when none has it. */
  activate(secret: string): ResthookSubscription | undefined;
  remove(identifier: string): boolean;
  /** Copies, oldest first. */
  list(): ResthookSubscription[];
  /** Active subscriptions to this event. */
  active(event: ResthookEvent): ResthookSubscription[];
}

export function createSubscriptionStore(): SubscriptionStore {
  const subscriptions = new Map<string, ResthookSubscription>();
  const bySecret = new Map<string, string>();
  let sequence = 0;
  return {
    add(request, now) {
      sequence += 1;
      const subscription: ResthookSubscription = {
        identifier: `hook-${sequence}`,
        targetUrl: request.targetUrl,
        event: request.event,
        workspace: request.workspace ?? null,
        organization: request.organization ?? null,
        version: request.version,
        active: false,
        createdDt: now.toISOString(),
      };
      // 256 bits: the secret is all that proves the activation comes from the target.
      const secret = randomBytes(32).toString('hex');
      subscriptions.set(subscription.identifier, subscription);
      bySecret.set(secret, subscription.identifier);
      return { subscription: { ...subscription }, secret };
    },
    activate(secret) {
      const id = bySecret.get(secret);
      const subscription = id === undefined ? undefined : subscriptions.get(id);
      if (subscription === undefined) return undefined;
      subscription.active = true;
      return { ...subscription };
    },
    remove(id) {
      for (const [secret, owner] of bySecret) if (owner === id) bySecret.delete(secret);
      return subscriptions.delete(id);
    },
    list: () => [...subscriptions.values()].map((subscription) => ({ ...subscription })),
    active: (event) =>
      [...subscriptions.values()]
        .filter((subscription) => subscription.active && subscription.event === event)
        .map((subscription) => ({ ...subscription })),
  };
}
