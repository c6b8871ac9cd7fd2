/**
 * Why the gateway refuses a message or a recipient. Every module that decides to refuse
 * throws a RefusalError with one of these codes; src/smtp/smtp-reply.ts maps each code to
 * its SMTP reply in one place, so the replies in DESIGN.md have one source.
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
  | 'SHUTTING_DOWN';

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
