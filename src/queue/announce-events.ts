import { createHash } from 'node:crypto';
import type { Queue } from 'bullmq';
import type { GatewayEvent, GatewayEventName, WebhookJobData } from './webhook-queue.ts';

/** A receiver as the announcer needs it: where, and which events it asked for (absent: every one). */
export interface WebhookTarget {
  readonly url: string;
  readonly events?: readonly string[] | undefined;
  readonly workspaces?: readonly string[] | undefined;
}

/** One fact to announce, before it is addressed to receivers. */
export interface Announcement {
  event: GatewayEventName;
  /** The message; null for a fact without one (a refusal: nothing of the mail was kept). */
  messageId: string | null;
  /** The workspace the fact concerns, for the receivers' `workspaces` filter. */
  workspace: string;
  /**
   * What makes the fact one besides the event, message and workspace (the entry): the event id
   * is derived from them all, so announcing the same fact again (a re-run job, a repeated
   * delivery) gives the same id.
   */
  subject?: readonly (string | number)[];
  /** Facts of the event besides the message id, the workspace and the links. */
  payload: Readonly<Record<string, unknown>>;
  /** Where to read more; default the message's record and raw e-mail under the public URL. */
  links?: (publicUrl: string) => Readonly<Record<string, string>>;
}

/** Queues each fact's deliveries to the receivers that asked for it. */
export interface EventAnnouncer {
  announce(announcement: Announcement): Promise<void>;
}

/** Stable event id: the same fact always gets the same one (receivers dedupe by it). */
export function eventId(event: GatewayEventName, subject: readonly (string | number)[]): string {
  return `evt_${digest([event, ...subject].join('\n')).slice(0, 32)}`;
}

/** Does `target` want `event` for `workspace`? */
export function wants(target: WebhookTarget, event: GatewayEventName, workspace: string): boolean {
  return (
    (target.events === undefined || target.events.includes(event)) &&
    (target.workspaces === undefined || target.workspaces.includes(workspace))
  );
}

/**
 * One job per event and receiver, with an id from both (BullMQ ids may not hold `:`), so a
 * repeated announcement adds nothing and each receiver's retries are its own.
 */
export const deliveryJobId = (id: string, url: string): string => `${id}-${digest(url).slice(0, 16)}`;

export function createEventAnnouncer(options: {
  queue: () => Queue<WebhookJobData>;
  /** Base URL of the record API (http.publicUrl): the payload links to the record and the raw e-mail there. */
  publicUrl: string;
  /** The receivers in force (events.webhooks): read at each announcement, so a reload applies. */
  targets: () => readonly WebhookTarget[];
  now?: () => Date;
}): EventAnnouncer {
  const now = options.now ?? (() => new Date());
  return {
    async announce({ event, messageId, workspace, subject = [], payload, links }) {
      const receivers = options.targets().filter((target) => wants(target, event, workspace));
      if (receivers.length === 0) return;
      const record = `${options.publicUrl}/v1/messages/${messageId}`;
      const body: GatewayEvent = {
        id: eventId(event, [messageId ?? '', workspace, ...subject]),
        event,
        timestamp: now().toISOString(),
        // Links, never the mail or the API key: a receiver is trusted with no more than it needs.
        payload: {
          messageId,
          workspace,
          ...payload,
          links: links ? links(options.publicUrl) : { record, rawEmail: `${record}/raw` },
        },
      };
      const queue = options.queue();
      await Promise.all(
        receivers.map((target) =>
          queue.add(event, { url: target.url, event: body }, { jobId: deliveryJobId(body.id, target.url) }),
        ),
      );
    },
  };
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
