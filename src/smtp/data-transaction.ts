import type { SMTPServerDataStream, SMTPServerSession } from 'smtp-server';
import type { IntakeWorkspace } from '../intake/intake-settings-schema.ts';
import type { ReadSoFar, ReceiveMessage } from '../intake/receive-message.ts';
import type { RoutedWorkspace } from '../intake/route-table.ts';
import type { Logger } from '../logger.ts';
import { refusalReason } from '../metrics.ts';
import type { RefusalLog } from '../record/refusal-log.ts';
import type { RateLimiter } from './rate-limit.ts';
import type { RefusalAnswers } from './refusal-answer.ts';
import { whoSends } from './refusal-answer.ts';
import type { RoutedRecipients, SmtpRoutes } from './session-checks.ts';
import { acceptedReply, replyFor, toSmtpError } from './smtp-reply.ts';

export interface DataTransactionOptions {
  routes: SmtpRoutes;
  /** What each recipient was routed to at RCPT; the route table only for one it lacks. */
  routed: RoutedRecipients;
  receive: ReceiveMessage;
  log: Logger;
  refusals: RefusalAnswers;
  /** Where a refused message is remembered (GET /v1/refusals); absent: nowhere. */
  refusalLog?: RefusalLog;
  rateLimiter?: RateLimiter;
  onOutcome?: (outcome: 'accepted' | 'refused' | 'failed', responseCode: number) => void;
}

/**
 * DATA as the protocol sees it: the session's recipients become their workspaces, the intake
 * takes the message, and its result or refusal becomes the one reply (smtp-reply.ts).
 */
export function createDataTransaction(options: DataTransactionOptions) {
  const { routes, receive, refusals } = options;
  return async function onData(stream: SMTPServerDataStream, session: SMTPServerSession): Promise<string> {
    const who = whoSends(session);
    const sessionLog = options.log.child({ transaction: session.transaction, ...who });
    const readSoFar: ReadSoFar = { headerFrom: null };
    const workspaces: RoutedWorkspace<IntakeWorkspace>[] = [];
    const seen = new Set<string>();
    let postmaster = false;
    for (const rcpt of session.envelope.rcptTo) {
      const routed = options.routed.get(rcpt) ?? routes.lookup(rcpt.address);
      if (!routed) postmaster ||= routes.isPostmaster?.(rcpt.address) ?? false;
      if (routed && !seen.has(routed.config.identifier)) {
        seen.add(routed.config.identifier);
        workspaces.push(routed);
      }
    }
    const mailFrom = session.envelope.mailFrom;
    try {
      const result = await receive(
        stream,
        {
          remoteAddress: who.remoteAddress,
          helo: who.helo,
          mailFrom: mailFrom ? mailFrom.address : null,
          rcptTo: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          workspaces,
          postmaster,
        },
        sessionLog,
        readSoFar,
      );
      options.onOutcome?.('accepted', 250);
      void options.rateLimiter?.countAccepted(session.remoteAddress, mailFrom ? mailFrom.address : '');
      return acceptedReply(result.messageId);
    } catch (err) {
      const reply = replyFor(err);
      if (reply.internal)
        sessionLog.error({ err }, 'message not accepted: internal failure, sender will retry');
      else sessionLog.info({ reply: `${reply.responseCode} ${reply.message}` }, 'message refused');
      options.onOutcome?.(reply.internal ? 'failed' : 'refused', reply.responseCode);
      refusals.count('data', err);
      options.refusalLog?.record({
        stage: 'data',
        code: refusalReason(err),
        reply: `${reply.responseCode} ${reply.message}`,
        remoteAddress: who.remoteAddress,
        helo: who.helo,
        mailFrom: who.mailFrom,
        recipients: session.envelope.rcptTo.map((rcpt) => rcpt.address),
        headerFrom: readSoFar.headerFrom,
        sessionId: who.sessionId,
      });
      throw toSmtpError(reply);
    }
  };
}
