/**
 * Why the gateway refuses a message or a recipient. Every module that decides to refuse
 * throws a RefusalError with one of these codes; src/smtp/smtp-reply.ts maps each code to
 * its SMTP reply in one place, so the README's table of replies has one source.
 */
export type RefusalCode =
  /** RCPT TO is not a configured ingest address. */
  | 'RECIPIENT_UNKNOWN'
  /** The header From is not admitted by any addressed workspace's allow-list. */
  | 'SENDER_NOT_ADMITTED'
  /** The message is larger than smtp.maxMessageSize. */
  | 'MESSAGE_TOO_LARGE'
  /** More supported attachments than the limit. */
  | 'TOO_MANY_ATTACHMENTS'
  /** One part is larger than the service's file limit. */
  | 'PART_TOO_LARGE'
  /** No part of the message is a supported document. */
  | 'NO_SUPPORTED_ATTACHMENT'
  /** The MIME structure is beyond what the gateway parses (depth, part count, header size). */
  | 'MIME_LIMIT'
  /** The gateway is stopping and takes no new mail. */
  | 'SHUTTING_DOWN'
  /** The client opened more connections than smtp.rateLimit allows: refused at connect. */
  | 'CONNECTION_RATE_EXCEEDED'
  /** The client or the envelope sender started more transactions than smtp.rateLimit allows. */
  | 'MESSAGE_RATE_EXCEEDED'
  /** The client had more recipients refused than smtp.maxRefusedRecipients allows (address harvesting). */
  | 'REFUSED_RECIPIENTS_EXCEEDED'
  /** MAIL or RCPT carries a parameter the gateway does not advertise (RFC 5321 4.1.1.11). */
  | 'UNKNOWN_PARAMETER'
  /** An address with 8-bit (UTF-8) characters in a transaction without SMTPUTF8 (RFC 6531 3.5). */
  | 'UTF8_ADDRESS_WITHOUT_SMTPUTF8'
  /** A transaction names more recipients than smtp.maxRecipients. */
  | 'TOO_MANY_RECIPIENTS'
  /** RCPT TO names a workspace whose admission policy differs from the transaction's first recipient's. */
  | 'OTHER_ADMISSION_POLICY'
  /** RCPT TO reaches a workspace already in the transaction under another subaddress tag or document type. */
  | 'OTHER_SUBADDRESS'
  /** smtp.requireTls is set and the client sent MAIL before STARTTLS. */
  | 'TLS_REQUIRED'
  /** DATA holds a CR or LF that is not part of a CRLF pair (SMTP smuggling). */
  | 'BARE_LINE_ENDING'
  /** A command line is longer than RFC 5321 allows. */
  | 'COMMAND_LINE_TOO_LONG'
  /** The session lasted longer than smtp.sessionTimeout. */
  | 'SESSION_TIME_EXCEEDED'
  /** A PROXY protocol line from a peer that is not in smtp.proxyProtocolFrom. */
  | 'PROXY_NOT_TRUSTED'
  /** The header From is not authenticated (SPF/DKIM/DMARC) as the workspace's senderAuthentication asks. */
  | 'SENDER_NOT_AUTHENTICATED'
  /** A DNS lookup sender authentication depends on failed for now (SERVFAIL, timeout). */
  | 'SENDER_AUTHENTICATION_TEMPFAIL'
  /** Another copy of the same delivery is being committed right now. */
  | 'DELIVERY_IN_PROGRESS'
  /** clamd found malware in the message (workspace malware: refuse). */
  | 'MALWARE_FOUND'
  /** rspamd's action is reject (workspace spam: refuse). */
  | 'SPAM_REJECTED'
  /** rspamd's action is soft reject or greylist (workspace spam: refuse). */
  | 'SPAM_DEFERRED'
  /** A scanner did not answer in time or failed, and scan.unavailable is tempfail. */
  | 'SCAN_UNAVAILABLE'
  /** The message is longer than clamd reads (its StreamMaxLength), and scan.unavailable is tempfail. */
  | 'TOO_LARGE_TO_SCAN';

export class RefusalError extends Error {
  readonly code: RefusalCode;

  constructor(code: RefusalCode, message: string) {
    super(message);
    this.name = 'RefusalError';
    this.code = code;
  }
}

/** Narrow an unknown thrown value to an Error, wrapping anything else. */
export function asError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}
