import * as z from 'zod/mini';
import { integer, nonEmptyString } from '../config-fields.ts';
import type { WebhookSchedule } from '../queue/webhook-backoff.ts';
import { gatewayEvents } from '../queue/webhook-queue.ts';

/** An http(s) URL without credentials in it (the secret signs; a password in a URL gets logged). */
const receiverUrl = () =>
  z.string().check(
    z.refine(
      (text) => {
        const url = URL.parse(text);
        return (
          url !== null &&
          (url.protocol === 'https:' || url.protocol === 'http:') &&
          url.username === '' &&
          url.password === ''
        );
      },
      { error: 'expected an http(s) URL without user or password' },
    ),
  );

/** One receiver of `events.webhooks`. */
const webhookSchema = z.strictObject({
  /** Where each event is POSTed. */
  url: receiverUrl(),
  /** Signs each delivery (X-Ingest-Signature); from the environment, as `${WEBHOOK_SECRET}`. */
  secret: z.string().check(z.minLength(16, { error: 'must be at least 16 characters' })),
  /** The events this receiver gets; default every event. */
  events: z.optional(z.array(z.enum(gatewayEvents)).check(z.minLength(1))),
  /** The workspaces (identifiers) whose events it gets; default every workspace. */
  workspaces: z.optional(z.array(nonEmptyString()).check(z.minLength(1))),
});

/** The `events` section: where the gateway announces what happens to mail and documents. */
export const eventSettingsSchema = z.strictObject({
  /** Receivers of signed webhooks; default none. */
  webhooks: z._default(z.array(webhookSchema), []),
  /** Milliseconds before a failed delivery is tried again, doubling per attempt; default 10000. */
  retryBaseDelay: z._default(integer(1, 3_600_000), 10_000),
  /** Milliseconds: the longest wait between two attempts; default 3600000 (1 h). */
  retryMaxDelay: z._default(integer(1, 86_400_000), 3_600_000),
  /** Milliseconds after the first attempt until a delivery is given up; default 86400000 (24 h). */
  retryFor: z._default(integer(0, 7 * 86_400_000), 86_400_000),
  /** Milliseconds one delivery request may take; default 10000. */
  timeout: z._default(integer(100, 120_000), 10_000),
});

export type EventSettings = z.output<typeof eventSettingsSchema>;

/** The delivery schedule the `events` section sets (webhook-backoff.ts). */
export function webhookSchedule(
  events: Pick<EventSettings, 'retryBaseDelay' | 'retryMaxDelay' | 'retryFor'>,
): WebhookSchedule {
  return { baseMs: events.retryBaseDelay, capMs: events.retryMaxDelay, windowMs: events.retryFor };
}
