import type { Logger } from '../logger.ts';
import type { RefusalFacts, RefusalLog } from '../record/refusal-log.ts';
import type { EventAnnouncer } from './announce-events.ts';

/**
 * `message.refused` (README, "Webhooks"): a refusal written to the refusal log is also
 * announced when it concerns a workspace, so a tenant hears that a supplier's mail was turned
 * away. Only the refusals a receiver can act on, so a harvesting or flooding client does not
 * become a flood of deliveries:
 * - a message refused at DATA (after its recipients were taken), once per workspace of its
 *   recipients;
 * - a recipient refused at RCPT that is an ingest address (a command the gateway does not
 *   take for it), never an unknown address;
 * and of those only permanent refusals (`5xx`): a `4xx` asks the sender to try again (a rate
 * limit, Redis away), and the mail may still arrive.
 * Refusals at connect and MAIL name no workspace and are not announced.
 */
export function announcingRefusals(options: {
  log: RefusalLog;
  announcer: EventAnnouncer;
  /** The workspace an address routes to now; null for an address that is no ingest address. */
  workspaceOf: (recipient: string) => string | null;
  logger: Logger;
  now?: () => number;
}): RefusalLog {
  const { log, announcer, workspaceOf } = options;
  const now = options.now ?? Date.now;
  const warn = options.logger.child({ component: 'refusal-events' });

  function announce(facts: RefusalFacts): void {
    if ((facts.stage !== 'data' && facts.stage !== 'rcpt') || !facts.reply.startsWith('5')) return;
    const byWorkspace = new Map<string, string[]>();
    for (const recipient of facts.recipients) {
      const workspace = workspaceOf(recipient);
      if (workspace === null) continue;
      byWorkspace.set(workspace, [...(byWorkspace.get(workspace) ?? []), recipient]);
    }
    const refusedAt = new Date(now()).toISOString();
    for (const [workspace, recipients] of byWorkspace) {
      const query = new URLSearchParams({ to: recipients[0] ?? '', stage: facts.stage });
      // Announced, not awaited: the SMTP reply never waits for a receiver's queue.
      announcer
        .announce({
          event: 'message.refused',
          // Nothing of a refused message is kept: no record to link to, the refusal log instead.
          messageId: null,
          workspace,
          subject: [facts.sessionId, facts.stage, refusedAt, ...recipients],
          payload: {
            refusedAt,
            stage: facts.stage,
            code: facts.code,
            reply: facts.reply,
            mailFrom: facts.mailFrom,
            headerFrom: facts.headerFrom,
            recipients,
          },
          links: (publicUrl) => ({ refusals: `${publicUrl}/v1/refusals?${query.toString()}` }),
        })
        .catch((err: unknown) => warn.warn({ err, workspace }, 'message.refused not announced'));
    }
  }

  return {
    record(facts) {
      log.record(facts);
      try {
        announce(facts);
      } catch (err) {
        warn.warn({ err }, 'message.refused not announced');
      }
    },
    flushed: () => log.flushed(),
  };
}
