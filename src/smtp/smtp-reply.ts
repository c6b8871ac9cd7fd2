import { type RefusalCode, RefusalError } from '../errors.ts';

/**
 * An error smtp-server turns into a reply: `responseCode` is the reply code and the message
 * starts with the enhanced status code (RFC 3463). The gateway writes enhanced codes itself,
 * because smtp-server derives them from the reply code alone (every 550 would say 5.1.1).
 */
export interface SmtpReplyError extends Error {
  responseCode: number;
}

export interface SmtpReply {
  responseCode: number;
  /** Enhanced status code and text, e.g. `5.7.1 sender not admitted`. */
  message: string;
  /** Whether the cause is internal: logged with its detail, never sent to the client. */
  internal: boolean;
}

const replies: Record<RefusalCode, { responseCode: number; enhanced: string }> = {
  RECIPIENT_UNKNOWN: { responseCode: 550, enhanced: '5.1.1' },
  SENDER_NOT_ADMITTED: { responseCode: 550, enhanced: '5.7.1' },
  MESSAGE_TOO_LARGE: { responseCode: 552, enhanced: '5.3.4' },
  TOO_MANY_ATTACHMENTS: { responseCode: 550, enhanced: '5.7.0' },
  PART_TOO_LARGE: { responseCode: 552, enhanced: '5.3.4' },
  NO_SUPPORTED_ATTACHMENT: { responseCode: 550, enhanced: '5.6.0' },
  MIME_LIMIT: { responseCode: 550, enhanced: '5.6.0' },
  SHUTTING_DOWN: { responseCode: 421, enhanced: '4.3.2' },
  CONNECTION_RATE_EXCEEDED: { responseCode: 421, enhanced: '4.7.0' },
  MESSAGE_RATE_EXCEEDED: { responseCode: 450, enhanced: '4.7.1' },
  REFUSED_RECIPIENTS_EXCEEDED: { responseCode: 421, enhanced: '4.7.0' },
  UNKNOWN_PARAMETER: { responseCode: 555, enhanced: '5.5.4' },
  UTF8_ADDRESS_WITHOUT_SMTPUTF8: { responseCode: 553, enhanced: '5.6.7' },
  TOO_MANY_RECIPIENTS: { responseCode: 452, enhanced: '4.5.3' },
  OTHER_ADMISSION_POLICY: { responseCode: 452, enhanced: '4.5.3' },
  OTHER_SUBADDRESS: { responseCode: 452, enhanced: '4.5.3' },
  TLS_REQUIRED: { responseCode: 530, enhanced: '5.7.0' },
  BARE_LINE_ENDING: { responseCode: 550, enhanced: '5.6.0' },
  COMMAND_LINE_TOO_LONG: { responseCode: 500, enhanced: '5.5.2' },
  SESSION_TIME_EXCEEDED: { responseCode: 421, enhanced: '4.4.2' },
  PROXY_NOT_TRUSTED: { responseCode: 421, enhanced: '4.7.0' },
  SENDER_NOT_AUTHENTICATED: { responseCode: 550, enhanced: '5.7.1' },
  SENDER_AUTHENTICATION_TEMPFAIL: { responseCode: 451, enhanced: '4.7.0' },
  DELIVERY_IN_PROGRESS: { responseCode: 451, enhanced: '4.3.0' },
  MALWARE_FOUND: { responseCode: 550, enhanced: '5.7.1' },
  SPAM_REJECTED: { responseCode: 550, enhanced: '5.7.1' },
  SPAM_DEFERRED: { responseCode: 451, enhanced: '4.7.1' },
  SCAN_UNAVAILABLE: { responseCode: 451, enhanced: '4.7.1' },
  TOO_LARGE_TO_SCAN: { responseCode: 552, enhanced: '5.3.4' },
};

/** The reply to anything that is not a deliberate refusal: the sending server keeps the mail and retries. */
export const temporaryFailure: SmtpReply = {
  responseCode: 451,
  message: '4.3.0 temporary failure, please try again later',
  internal: true,
};

/** Maps what went wrong to its SMTP reply, the README's table of replies. Pure. */
export function replyFor(error: unknown): SmtpReply {
  if (!(error instanceof RefusalError)) return temporaryFailure;
  const reply = replies[error.code];
  return { responseCode: reply.responseCode, message: `${reply.enhanced} ${error.message}`, internal: false };
}

export function acceptedReply(messageId: string): string {
  return `2.0.0 queued as ${messageId}`;
}

export function toSmtpError(reply: SmtpReply): SmtpReplyError {
  return Object.assign(new Error(reply.message), { responseCode: reply.responseCode });
}
