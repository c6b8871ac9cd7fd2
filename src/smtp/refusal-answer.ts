import type { SMTPServerError, SMTPServerSession } from 'smtp-server';
import type { RefusalError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { type GatewayMetrics, type RefusalStage, refusalReason } from '../metrics.ts';
import { replyFor, toSmtpError } from './smtp-reply.ts';

/** Where a refusal happened and whom it refused: every refusal's log line says both. */
export interface RefusedAt {
  stage: 'connect' | 'MAIL' | 'RCPT';
  sessionId: string;
  remoteAddress: string | null;
  /** The envelope sender; null before MAIL and for the null reverse-path. */
  mailFrom: string | null;
  recipient?: string;
}

const REFUSED: Record<RefusedAt['stage'], string> = {
  connect: 'connection refused',
  MAIL: 'sender refused',
  RCPT: 'recipient refused',
};

/** The refusals metric's stage label of each hook. */
const METRIC_STAGE: Record<RefusedAt['stage'], RefusalStage> = {
  connect: 'connect',
  MAIL: 'mail',
  RCPT: 'rcpt',
};

/** The client and the envelope sender of a session, as every refusal's log line carries them. */
export function whoSends(session: SMTPServerSession): Omit<RefusedAt, 'stage'> {
  const mailFrom = session.envelope.mailFrom;
  return {
    sessionId: session.id,
    remoteAddress: session.remoteAddress || null,
    mailFrom: mailFrom ? mailFrom.address || null : null,
  };
}

export interface RefusalAnswers {
  /**
   * An smtp-server hook's callback, from a decision: the refusal's reply, or go on. A refusal
   * is logged with who was refused, since the client may never say what it did about it.
   */
  answer(
    decision: Promise<RefusalError | null>,
    callback: (err?: SMTPServerError | null) => void,
    who: RefusedAt,
  ): void;
  /** Counts a refusal (or an internal failure) at `stage` in the refusals metric. */
  count(stage: RefusalStage, err: unknown): void;
}

/** The one place a session hook's refusal becomes its reply, its log line and its count. */
export function createRefusalAnswers(log: Logger, metrics: GatewayMetrics | undefined): RefusalAnswers {
  const count = (stage: RefusalStage, err: unknown) =>
    metrics?.smtpRefusals.inc({ stage, reason: refusalReason(err) });
  return {
    count,
    answer(decision, callback, who) {
      decision.then(
        (refusal) => {
          if (!refusal) return callback(null);
          const reply = replyFor(refusal);
          log.info({ ...who, reply: `${reply.responseCode} ${reply.message}` }, REFUSED[who.stage]);
          count(METRIC_STAGE[who.stage], refusal);
          callback(toSmtpError(reply));
        },
        (err: unknown) => {
          log.error({ err, ...who }, 'session check failed');
          count(METRIC_STAGE[who.stage], err);
          callback(toSmtpError(replyFor(err)));
        },
      );
    },
  };
}
