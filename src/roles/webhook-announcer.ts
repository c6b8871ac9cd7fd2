import { createEventAnnouncer, type EventAnnouncer } from '../queue/announce-events.ts';
import type { Queues } from '../queue/queues.ts';
import type { RoleContext } from './role-context.ts';

/**
 * The announcer of one role: queues each event for the receivers of the configuration in
 * force (a reload changes the receivers and filters of the next event). Apart from the
 * delivery worker (webhook-role.ts), so an SMTP role announcing events never loads its HTTP client.
 */
export function webhookAnnouncer(context: RoleContext, queues: Queues, publicUrl: string): EventAnnouncer {
  return createEventAnnouncer({
    queue: () => queues.webhooks,
    publicUrl,
    targets: () => context.settings.current().config.events.webhooks,
  });
}
