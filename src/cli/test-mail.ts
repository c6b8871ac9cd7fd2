import { basename } from 'node:path';
import type { SendMailOptions } from 'nodemailer';

/**
 * The e-mail `ingest-gateway send` composes from its options: addresses, headers, a text
 * and an HTML body, the files attached. Pure, so the composition is tested as a table; the
 * SMTP exchange is send-command.ts's.
 */

export interface HeaderField {
  key: string;
  value: string;
}

export interface TestMailOptions {
  from: string;
  to: readonly string[];
  cc: readonly string[];
  subject: string;
  headers: readonly HeaderField[];
  body?: string | undefined;
  html?: string | undefined;
  attach: readonly string[];
}

/**
 * RFC 5322 §2.2 and §3.6.8: a field name is printable US-ASCII other than the colon; the
 * value is unstructured text on one line (nodemailer folds it), so CR and LF are refused:
 * they would end the field and start one the user did not write.
 */
const fieldName = /^[!-9;-~]+$/;

/** `Name: value` to a header field, or the reason it is not one. */
export function parseHeaderField(text: string): HeaderField | { problem: string } {
  const colon = text.indexOf(':');
  if (colon <= 0) return { problem: `expected "Name: value", got ${JSON.stringify(text)}` };
  const key = text.slice(0, colon).trim();
  const value = text.slice(colon + 1).trim();
  if (!fieldName.test(key)) return { problem: `${JSON.stringify(key)} is not a header field name` };
  if (/[\r\n]/.test(value)) return { problem: `the value of ${key} has a line break` };
  return { key, value };
}

export function composeTestMail(options: TestMailOptions): SendMailOptions {
  const noBody = options.body === undefined && options.html === undefined;
  return {
    from: options.from,
    to: [...options.to],
    ...(options.cc.length > 0 ? { cc: [...options.cc] } : {}),
    subject: options.subject,
    ...(options.headers.length > 0
      ? { headers: options.headers.map(({ key, value }) => ({ key, value })) }
      : {}),
    // Without --body or --html, a line that says what the mail is, as before these options.
    ...(noBody ? { text: `Sent with ingest-gateway send: ${options.attach.length} attachment(s).` } : {}),
    ...(options.body !== undefined ? { text: options.body } : {}),
    ...(options.html !== undefined ? { html: options.html } : {}),
    attachments: options.attach.map((path) => ({ path, filename: basename(path) })),
  };
}

/** The gateway's queue id in its 250 reply (`250 2.0.0 queued as ID`); null for another server's. */
export function queueIdOf(reply: string): string | null {
  return /\bqueued as ([0-9a-z]{1,64})\b/.exec(reply)?.[1] ?? null;
}
