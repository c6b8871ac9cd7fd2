import * as z from 'zod/mini';
import { documentWarningSchema, requestErrorSchema } from '../parsing-api/document-schema.ts';
import { HOLD_REASONS as SCAN_HOLD_REASONS, scanRecordSchema } from '../scan/scan-record-schema.ts';
import {
  senderAuthenticationSchema,
  workspaceDecisionSchema,
} from '../sender/sender-authentication-schema.ts';

export type { WorkspaceDecision } from '../sender/admit-sender.ts';

/**
 * Why a message is held: a scanner's verdict (src/scan), a sender the workspace's allow-list
 * does not name under `unlistedSenders: hold`, or a mailbox provider's forwarding confirmation
 * (src/intake/forwarding-confirmation.ts), which is held whatever the allow-list says.
 */
export const HOLD_REASONS = [...SCAN_HOLD_REASONS, 'sender_not_listed', 'forwarding_confirmation'] as const;
export type HoldReason = (typeof HOLD_REASONS)[number];

/**
 * What happened to one attachment for one workspace: the `state` of the README's record.
 * `held`: the message is held (a scanner's verdict under a workspace's `hold` policy, or a
 * sender its allow-list does not name under `unlistedSenders: hold`), and nothing of it is
 * uploaded unless it is released; `discarded`: the held message was discarded, its bytes deleted.
 */
export const attachmentStates = [
  'queued',
  'uploading',
  'uploaded',
  'rejected',
  'failed',
  'skipped',
  'held',
  'discarded',
] as const;
export type AttachmentState = (typeof attachmentStates)[number];

/**
 * The message record and the document source as schemas: the types the gateway writes and
 * reads are derived from them, and GET /v1/openapi.json describes its answers with them, so
 * the descriptions are the field documentation for both.
 */

/** A count, an entry number, a size: a whole number from 0. */
const count = () => z.int().check(z.gte(0));
/** A time the gateway wrote (Date.toISOString). */
const isoTime = () => z.iso.datetime();
const described = <T extends z.ZodMiniType>(schema: T, description: string): T =>
  schema.check(z.describe(description));
const nullableText = (description: string) => described(z.nullable(z.string()), description);

export const completionStatusSchema = described(
  z.object({
    state: described(
      z.enum(['polling', 'ready', 'failed', 'not-found', 'gave-up', 'error']),
      'polling: a poll is scheduled; the others are final',
    ),
    polls: described(count(), 'Polls made so far'),
    nextPollAt: described(z.nullable(isoTime()), 'When the next poll is due, while polling'),
    reason: nullableText('Why polling stopped, or the last transient failure while polling'),
    settledBy: z.optional(
      described(
        z.enum(['poll', 'resthook']),
        "How the outcome was learnt: a poll, or the service's parse event (trackCompletion via resthook)",
      ),
    ),
  }),
  'Completion tracking (workspaces[].trackCompletion): where learning the parse outcome stands',
);

export const attachmentEntrySchema = z.object({
  entry: described(count(), "Position of this entry in the record's attachments"),
  part: described(count(), 'Leaf number of the part in the message'),
  fileName: described(
    z.string(),
    'The name sent upstream (an uploaded part) or shown (a skipped one): sanitised, its extension matching the detected type',
  ),
  originalFileName: z.optional(
    nullableText(
      'The name as the message gave it, decoded, not sanitised; null when it gave none (absent in records written before it existed)',
    ),
  ),
  path: z.optional(
    described(
      z.string(),
      'Where the part came from: its MIME part and name, and for a file taken out of a container the container too, e.g. `part 3 > winmail.dat > contract.pdf` (absent in records written before it existed)',
    ),
  ),
  contentType: described(z.string(), 'Content-Type as the message declared it'),
  detectedType: nullableText(
    'MIME type of the document the bytes are (sent upstream); null for a part of no supported type',
  ),
  size: described(count(), 'Bytes, decoded'),
  sha256: described(z.string().check(z.regex(/^[0-9a-f]{64}$/)), 'SHA-256 of the decoded bytes, hex'),
  workspace: nullableText('Workspace identifier; null for a skipped part, which no workspace receives'),
  subaddress: z.optional(
    described(
      z.string(),
      'The tag of the recipient address the workspace was reached by, as written (`inbox+invoices@…`: `invoices`; smtp.subaddressSeparator); its uploads carry the fields workspaces[].subaddresses gives that tag. Absent when the address had none',
    ),
  ),
  documentType: z.optional(
    described(
      z.string(),
      "The document type whose ingest address the workspace was reached by (discovery); its upload carries it as `documentType`. Absent when the workspace's own address was used",
    ),
  ),
  state: z.enum(attachmentStates),
  reason: nullableText('Why the entry is in its state, when there is more to say'),
  documentIdentifier: nullableText('The identifier of the document the service created'),
  attempts: described(count(), 'Upload attempts made'),
  warnings: described(z.array(documentWarningSchema), "The Document's warnings"),
  updatedAt: isoTime(),
  error: z.optional(
    described(
      z.nullable(z.object({ errorCode: z.string(), errorDetail: z.string() })),
      "The Document's error when the service rejected the document (state rejected)",
    ),
  ),
  requestError: z.optional(
    described(
      z.nullable(requestErrorSchema),
      "The service's RequestError of a refused request (state failed): its type and each field's error",
    ),
  ),
  ready: z.optional(
    described(
      z.nullable(z.boolean()),
      'Parse outcome (meta.ready), from a wait: true answer or completion tracking',
    ),
  ),
  failed: z.optional(described(z.nullable(z.boolean()), 'Parse outcome (meta.failed)')),
  readyDt: z.optional(nullableText('Parse outcome (meta.readyDt), as the service wrote it')),
  completion: z.optional(z.nullable(completionStatusSchema)),
});

/** The static part of a message record, written once when the message is accepted. */
export const messageSummarySchema = z.object({
  id: described(z.string().check(z.regex(/^[0-9a-z]{1,64}$/)), 'The queue id of the 250 reply'),
  messageId: nullableText('The Message-ID header, without angle brackets'),
  receivedAt: isoTime(),
  remoteAddress: nullableText('The SMTP client address'),
  envelope: z.object({ mailFrom: z.nullable(z.string()), rcptTo: z.array(z.string()) }),
  from: nullableText('Header From address'),
  subject: z.nullable(z.string()),
  sourceEmail: described(z.url(), 'URL of the stored e-mail (GET /v1/messages/{id}/raw)'),
  sourceEmailAddress: nullableText(
    "The e-mail's From address, as the parsing service records it for e-mailed documents",
  ),
  size: described(count(), 'Bytes of the message as received'),
  workspaces: z.array(workspaceDecisionSchema),
  authentication: described(
    z.nullable(senderAuthenticationSchema),
    'SPF, DKIM, DMARC and ARC results and the verdicts; null when no workspace asked for them',
  ),
  via: z.optional(
    described(
      z.enum(['replay']),
      'replay: taken from a file by `ingest-gateway replay`, through the same checks as SMTP; absent for mail received over SMTP',
    ),
  ),
  keptFor: z.optional(
    described(
      z.enum(['postmaster']),
      'postmaster: mail to postmaster@ a served domain or to <Postmaster> (RFC 5321 4.5.1), kept for the operator: stored and listed, never uploaded; absent for mail to ingest addresses',
    ),
  ),
  scan: z.optional(scanRecordSchema),
  smime: z.optional(
    described(
      z.object({
        signed: z.literal(true),
        signature: described(
          z.enum(['valid', 'invalid', 'unverified']),
          'valid: the signature verifies against the signer certificate the message carries (whether that certificate is trusted is not checked); invalid: it does not (the message was still taken); unverified: not checked (a clear-signed message, or no signer certificate in it)',
        ),
        signer: z.optional(
          described(z.string(), "The signer certificate's e-mail address, else its subject"),
        ),
      }),
      'The S/MIME signature of a signed message (docs/architecture.md, "Signed and encrypted mail"); absent for a message not signed',
    ),
  ),
  state: z.optional(
    described(
      z.enum(['held', 'released', 'discarded']),
      'held: the message is kept and nothing of it is uploaded (see hold); released: it was held and its documents were then queued for upload (POST /v1/messages/{id}/release); discarded: it was held and then deleted (POST /v1/messages/{id}/discard), only the record is left; absent for a message taken as usual',
    ),
  ),
  hold: z.optional(
    described(
      z.object({
        reason: described(
          z.enum(HOLD_REASONS),
          "Why it is held: a scanner's verdict (malware, spam), a sender the allow-list does not name (sender_not_listed), or a mailbox provider's forwarding confirmation (forwarding_confirmation; never uploaded, see confirmation)",
        ),
        workspace: described(
          z.string(),
          'The workspace whose policy holds it (the first of the transaction)',
        ),
        confirmation: z.optional(
          described(
            z.object({
              provider: described(z.string(), 'The mailbox provider, e.g. Gmail'),
              code: nullableText('The confirmation code; null when the message shows none'),
              link: nullableText('The confirmation link; null when the text shows none'),
              text: nullableText('The text of the message (at most 8000 characters); null when it has none'),
            }),
            'For a forwarding_confirmation: what a person needs to confirm the forwarding',
          ),
        ),
      }),
      'Why and for which workspace the message is (or was) held; absent for a message never held',
    ),
  ),
});

export const messageRecordSchema = z.extend(messageSummarySchema, {
  status: described(
    z.enum(['committed', 'enqueued']),
    'committed: record and blobs stored; enqueued: the upload jobs exist too',
  ),
  attachments: z.array(attachmentEntrySchema),
});

/** Where a document the service created came from (GET /v1/documents/{documentIdentifier}). */
export const documentSourceSchema = z.object({
  documentIdentifier: z.string(),
  messageId: described(z.string(), 'The id of the message record'),
  entry: count(),
  workspace: z.string(),
  fileName: z.string(),
  sourceEmail: described(z.url(), 'URL of the stored e-mail (GET /v1/messages/{id}/raw)'),
  sourceEmailAddress: z.nullable(z.string()),
});

export type AttachmentEntry = z.output<typeof attachmentEntrySchema>;
export type CompletionStatus = z.output<typeof completionStatusSchema>;
export type MessageSummary = z.output<typeof messageSummarySchema>;
export type MessageRecord = z.output<typeof messageRecordSchema>;
export type DocumentSource = z.output<typeof documentSourceSchema>;

/** The states after which an attachment changes no more (completion tracking aside). */
export const finalStates: ReadonlySet<AttachmentState> = new Set([
  'uploaded',
  'rejected',
  'failed',
  'skipped',
  'discarded',
]);

/** Whether every attachment of the record is in a final state: nothing more will happen to it. */
export function isSettled(record: Pick<MessageRecord, 'attachments'>): boolean {
  return record.attachments.every((attachment) => finalStates.has(attachment.state));
}
