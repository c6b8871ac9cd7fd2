import { randomBytes } from 'node:crypto';
import * as z from 'zod';

/**
 * Resthook subscriptions (README.md, "Resthooks"): created pending by
 * `POST /v3/resthook_subscriptions` `{targetUrl, event, workspace | organization,
 * version: "v3"}`, each with a secret the mock sends to the target as `X-Hook-Secret`, and
 * active once the subscriber posts that secret back to `/activate`. Only active
 * subscriptions receive events.
 */

export const RESTHOOK_EVENTS = [
  'document.parse.succeeded',
  'document.parse.failed',
  'document.parse.completed',
  // A document rejected as a duplicate or as a file of the wrong type.
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
    /** Subscriptions are created with "v3"; the mock takes its absence as "v3" too. */
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
  /** Deactivated by the mock after deliveries failed in a row (active false), with why. */
  autoDeactivated: boolean;
  autoDeactivatedReason: string | null;
  createdDt: string;
}

export interface SubscriptionStore {
  /** A pending subscription, and the secret the handshake carries. */
  add(request: SubscriptionRequest, now: Date): { subscription: ResthookSubscription; secret: string };
  /** Activates the subscription of this secret (again: no change); undefined when none has it. */
  activate(secret: string): ResthookSubscription | undefined;
  remove(identifier: string): boolean;
  /** A delivery to it succeeded: its count of deliveries given up in a row starts over. */
  delivered(identifier: string): void;
  /**
   * A delivery to it was given up; at `limit` in a row it is deactivated with `why` (the
   * last attempt's status or error). Returns it when this deactivated it.
   */
  givenUp(identifier: string, limit: number, why: string): ResthookSubscription | undefined;
  /** Copies, oldest first. */
  list(): ResthookSubscription[];
  /** Active subscriptions to this event. */
  active(event: ResthookEvent): ResthookSubscription[];
}

export function createSubscriptionStore(): SubscriptionStore {
  const subscriptions = new Map<string, ResthookSubscription>();
  const bySecret = new Map<string, string>();
  const failuresInRow = new Map<string, number>();
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
        autoDeactivated: false,
        autoDeactivatedReason: null,
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
      subscription.autoDeactivated = false;
      subscription.autoDeactivatedReason = null;
      failuresInRow.delete(subscription.identifier);
      return { ...subscription };
    },
    remove(id) {
      for (const [secret, owner] of bySecret) if (owner === id) bySecret.delete(secret);
      failuresInRow.delete(id);
      return subscriptions.delete(id);
    },
    delivered(id) {
      failuresInRow.delete(id);
    },
    givenUp(id, limit, why) {
      const subscription = subscriptions.get(id);
      if (subscription === undefined || !subscription.active) return undefined;
      const failures = (failuresInRow.get(id) ?? 0) + 1;
      failuresInRow.set(id, failures);
      if (failures < limit) return undefined;
      subscription.active = false;
      subscription.autoDeactivated = true;
      subscription.autoDeactivatedReason = `${failures} deliveries in a row failed (last: ${why})`;
      return { ...subscription };
    },
    list: () => [...subscriptions.values()].map((subscription) => ({ ...subscription })),
    active: (event) =>
      [...subscriptions.values()]
        .filter((subscription) => subscription.active && subscription.event === event)
        .map((subscription) => ({ ...subscription })),
  };
}
