import { readFileSync } from 'node:fs';
import MailComposer from 'nodemailer/lib/mail-composer';

const fixtures = new URL('../test/fixtures/', import.meta.url);

/** A committed sample file's bytes (test/fixtures/files). */
export function sampleFile(name: string): Buffer {
  return readFileSync(new URL(`files/${name}`, fixtures));
}

/** A committed .eml fixture (test/fixtures/mail). */
export function emlFixture(name: string): Buffer {
  return readFileSync(new URL(`mail/${name}`, fixtures));
}

/**
 * A valid PDF whose bytes differ by `label`: workspaces with rejectDuplicates would reject
 * the same bytes sent twice, so tests that are not about duplicates send distinct files.
 */
export function uniquePdf(label: string): Buffer {
  return Buffer.concat([sampleFile('sample.pdf'), Buffer.from(`\n%${label}\n`)]);
}

export interface Attachment {
  filename?: string;
  content: Buffer;
  contentType?: string;
  contentDisposition?: 'attachment' | 'inline';
  cid?: string;
}

export interface MessageOptions {
  from?: string;
  to?: string;
  subject?: string;
  text?: string;
  html?: string;
  attachments?: Attachment[];
  messageId?: string;
  headers?: Record<string, string>;
}

/** An RFC 5322 message built by nodemailer's composer, as a real mail client would send it. */
export async function composeMessage(options: MessageOptions = {}): Promise<Buffer> {
  const composer = new MailComposer({
    from: options.from ?? 'Ann <ann@acme.example>',
    to: options.to ?? 'invoices@ingest.test',
    subject: options.subject ?? 'Invoice',
    text: options.text ?? 'Please find the invoice attached.',
    ...(options.html ? { html: options.html } : {}),
    ...(options.messageId ? { messageId: options.messageId } : {}),
    ...(options.headers ? { headers: options.headers } : {}),
    attachments: (options.attachments ?? []).map((attachment) => ({ ...attachment })),
  });
  return composer.compile().build();
}

/** One attachment of multipartMessage: its file name, declared type and bytes. */
export type RawAttachment = readonly [name: string, type: string, bytes: Buffer];

/**
 * A multipart/mixed message written line by line, not by a composer: a short text body, then
 * each attachment in base64 with exactly the name and type given, so a test controls every
 * header a walk reads.
 */
export function multipartMessage(
  attachments: readonly RawAttachment[],
  headers: { to?: string; subject?: string } = {},
): Buffer {
  const lines = [
    'From: Ann <ann@acme.example>',
    `To: ${headers.to ?? 'documents@ingest.test'}`,
    `Subject: ${headers.subject ?? attachments.map(([name]) => name).join(', ')}`,
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="m"',
    '',
    '--m',
    'Content-Type: text/plain',
    '',
    'Attached.',
  ];
  for (const [name, type, bytes] of attachments) {
    lines.push(
      '--m',
      `Content-Type: ${type}; name="${name}"`,
      `Content-Disposition: attachment; filename="${name}"`,
      'Content-Transfer-Encoding: base64',
      '',
      ...(bytes.toString('base64').match(/.{1,76}/g) ?? []),
    );
  }
  lines.push('--m--', '');
  return Buffer.from(lines.join('\r\n'));
}
