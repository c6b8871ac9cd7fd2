import type { SMTPServerDataStream, SMTPServerSession } from 'smtp-server';
import type { IntakeWorkspace } from '../intake/intake-settings-schema.ts';
import type { ReceiveMessage } from '../intake/receive-message.ts';
import type { Logger } from '../logger.ts';
import type { AdmittingWorkspace } from '../sender/admit-sender.ts';
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
    const sessionLog = options.log.child({ transaction: session.transaction, ...whoSends(session) });
    const workspaces: AdmittingWorkspace<IntakeWorkspace>[] = [];
    const seen = new Set<string>();
    for (const rcpt of session.envelope.rcptTo) {
      const routed = options.routed.get(rcpt) ?? routes.lookup(rcpt.address);
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
          remoteAddress: session.remoteAddress || null,
          // false (typed string) until the client has sent HELO/EHLO.
          helo: session.hostNameAppearsAs || null,
          mailFrom: mailFrom ? mailFrom.address : null,
          rcptTo: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          workspaces,
        },
        sessionLog,
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
      throw toSmtpError(reply);
    }
  };
}
