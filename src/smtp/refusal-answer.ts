import type { SMTPServerError, SMTPServerSession } from 'smtp-server';
import type { RefusalError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { type GatewayMetrics, type RefusalStage, refusalReason } from '../metrics.ts';
import type { RefusalLog, RefusalLogStage } from '../record/refusal-log.ts';
import { replyFor, toSmtpError } from './smtp-reply.ts';

/** Where a refusal happened and whom it refused: every refusal's log line says both. */
export interface RefusedAt {
  stage: 'connect' | 'MAIL' | 'RCPT';
  sessionId: string;
  remoteAddress: string | null;
  /** The name the client gave in HELO/EHLO; null before it sent one. */
  helo: string | null;
  /** The envelope sender; null before MAIL and for the null reverse-path. */
  mailFrom: string | null;
  recipient?: string;
}

/**
 * Refusals not logged one by one: a harvesting client makes thousands, and
 * refused-recipients.ts logs one line per session for them instead.
 */
const SUMMARISED = new Set<RefusalError['code']>(['RECIPIENT_UNKNOWN', 'REFUSED_RECIPIENTS_EXCEEDED']);

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

/** The refusal log's stage of each hook. */
const LOG_STAGE: Record<RefusedAt['stage'], RefusalLogStage> = {
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
    // false (typed string) until the client has sent HELO/EHLO.
    helo: session.hostNameAppearsAs || null,
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

/**
 * The one place a session hook's refusal becomes its reply, its log line, its count and its
 * entry in the refusal log (absent: none is written).
 */
export function createRefusalAnswers(
  log: Logger,
  metrics: GatewayMetrics | undefined,
  refusalLog?: RefusalLog,
): RefusalAnswers {
  const count = (stage: RefusalStage, err: unknown) =>
    metrics?.smtpRefusals.inc({ stage, reason: refusalReason(err) });
  const remember = (who: RefusedAt, err: unknown, reply: string) =>
    refusalLog?.record({
      stage: LOG_STAGE[who.stage],
      code: refusalReason(err),
      reply,
      remoteAddress: who.remoteAddress,
      helo: who.helo,
      mailFrom: who.mailFrom,
      recipients: who.recipient === undefined ? [] : [who.recipient],
      headerFrom: null,
      sessionId: who.sessionId,
    });
  return {
    count,
    answer(decision, callback, who) {
      decision.then(
        (refusal) => {
          if (!refusal) return callback(null);
          const reply = replyFor(refusal);
          const line = `${reply.responseCode} ${reply.message}`;
          if (!SUMMARISED.has(refusal.code)) log.info({ ...who, reply: line }, REFUSED[who.stage]);
          count(METRIC_STAGE[who.stage], refusal);
          remember(who, refusal, line);
          callback(toSmtpError(reply));
        },
        (err: unknown) => {
          log.error({ err, ...who }, 'session check failed');
          count(METRIC_STAGE[who.stage], err);
          const reply = replyFor(err);
          remember(who, err, `${reply.responseCode} ${reply.message}`);
          callback(toSmtpError(reply));
        },
      );
    },
  };
}
