import { setTimeout as sleep } from 'node:timers/promises';
import type { SMTPServerSession } from 'smtp-server';
import { RefusalError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { GatewayMetrics } from '../metrics.ts';
import { compileNetworkList } from './network-list.ts';
import { clientSubject, type RateLimiter } from './rate-limit.ts';
import type { SmtpSettings } from './smtp-settings-schema.ts';

/**
 * Address harvesting: a client that tries recipient after recipient to learn which exist
 * (nmap's smtp-enum-users, a dictionary of local parts). As Postfix's smtpd_soft_error_limit
 * and smtpd_hard_error_limit do, refusals past a first few are answered late, and past a bound
 * the client is disconnected with `421 4.7.0`. The count is the client's, kept by the rate
 * limiter over smtp.refusedRecipientWindow, so a new connection does not reset it; when Redis
 * does not answer, the session's own count still bounds the session. Clients in
 * smtp.rateLimit.exempt are counted in the log only. One summary line per session replaces a
 * line per refused recipient (docs/architecture.md, "RCPT: the route lookup").
 */

export type HarvestSettings = Pick<
  SmtpSettings,
  'refusedRecipientDelayAfter' | 'refusedRecipientDelay' | 'maxRefusedRecipients'
>;

/** What the `count`-th refused recipient of a client gets. Pure. */
export type RefusedRecipientStep = 'refuse' | 'refuse-late' | 'disconnect';

export function refusedRecipientStep(count: number, settings: HarvestSettings): RefusedRecipientStep {
  if (count > settings.maxRefusedRecipients) return 'disconnect';
  if (count > settings.refusedRecipientDelayAfter && settings.refusedRecipientDelay > 0) return 'refuse-late';
  return 'refuse';
}

/** How many refused recipients a session's summary line names, the first ones refused. */
const SUMMARY_SAMPLE = 5;

interface SessionTally {
  /** Recipients refused in this session. */
  refused: number;
  /** The first SUMMARY_SAMPLE of them, for the summary line. */
  sample: string[];
  /** The client's count over the window as last read; undefined before the first read. */
  clientCount: number | null | undefined;
  /** Whether the session ended with the 421. */
  disconnected: boolean;
}

export interface RefusedRecipientsOptions {
  settings: HarvestSettings & Pick<SmtpSettings, 'rateLimit'>;
  rateLimiter?: RateLimiter;
  logger: Logger;
  metrics?: GatewayMetrics;
}

export interface RefusedRecipients {
  /**
   * RCPT, around the session's own check `decide`: a client already past the bound gets the
   * 421 without a lookup; a recipient `decide` refuses as unknown is counted, and its refusal
   * sent late past the first few, or replaced by the 421 past the bound.
   */
  atRcpt(
    session: SMTPServerSession,
    recipient: string,
    decide: () => RefusalError | null,
  ): Promise<RefusalError | null>;
  /** The session ended: its summary line, if it had refused recipients. */
  closed(session: SMTPServerSession): void;
}

export function createRefusedRecipients(options: RefusedRecipientsOptions): RefusedRecipients {
  const { settings, rateLimiter } = options;
  const log = options.logger;
  const exempt = compileNetworkList(settings.rateLimit.exempt);
  const tallies = new WeakMap<SMTPServerSession, SessionTally>();

  const tallyOf = (session: SMTPServerSession): SessionTally => {
    let tally = tallies.get(session);
    if (!tally) {
      tally = { refused: 0, sample: [], clientCount: undefined, disconnected: false };
      tallies.set(session, tally);
    }
    return tally;
  };

  const disconnect = (session: SMTPServerSession, tally: SessionTally): RefusalError => {
    tally.disconnected = true;
    options.metrics?.rateLimited.inc({ kind: 'refused_recipients' });
    const client = clientSubject(session.remoteAddress);
    return new RefusalError(
      'REFUSED_RECIPIENTS_EXCEEDED',
      `too many unknown recipients from ${client}, try again later`,
    );
  };

  async function beforeLookup(session: SMTPServerSession): Promise<RefusalError | null> {
    if (exempt(session.remoteAddress)) return null;
    const tally = tallyOf(session);
    if (tally.clientCount === undefined) {
      tally.clientCount = (await rateLimiter?.refusedRecipients(session.remoteAddress)) ?? null;
    }
    const count = Math.max(tally.clientCount ?? 0, tally.refused);
    return count >= settings.maxRefusedRecipients ? disconnect(session, tally) : null;
  }

  async function refused(session: SMTPServerSession, recipient: string, refusal: RefusalError) {
    const tally = tallyOf(session);
    tally.refused += 1;
    if (tally.sample.length < SUMMARY_SAMPLE) tally.sample.push(recipient);
    if (exempt(session.remoteAddress)) return refusal;
    const clientCount = (await rateLimiter?.countRefusedRecipient(session.remoteAddress)) ?? null;
    tally.clientCount = clientCount;
    const step = refusedRecipientStep(Math.max(clientCount ?? 0, tally.refused), settings);
    if (step === 'disconnect') return disconnect(session, tally);
    if (step === 'refuse-late') await sleep(settings.refusedRecipientDelay, undefined, { ref: false });
    return refusal;
  }

  return {
    async atRcpt(session, recipient, decide) {
      const over = await beforeLookup(session);
      if (over) return over;
      const refusal = decide();
      return refusal?.code === 'RECIPIENT_UNKNOWN' ? refused(session, recipient, refusal) : refusal;
    },

    closed(session) {
      const tally = tallies.get(session);
      if (!tally || (tally.refused === 0 && !tally.disconnected)) return;
      tallies.delete(session);
      log.info(
        {
          sessionId: session.id,
          remoteAddress: session.remoteAddress || null,
          refusedRecipients: tally.refused,
          firstRefused: tally.sample,
          disconnected: tally.disconnected,
        },
        'recipients refused in session',
      );
    },
  };
}
