import { createHash } from 'node:crypto';
import { RefusalError } from '../errors.ts';
import { type BodyDocument, findBodyDocument } from '../mail/body-document.ts';
import { documentMimeType } from '../mail/detect-type.ts';
import { sanitizeFileName } from '../mail/sanitize-file-name.ts';
import {
  describeFound,
  type SkipKind,
  type SkippedPart,
  selectAttachments,
} from '../mail/select-attachments.ts';
import type { LeafPart, WalkResult } from '../mail/walk-message.ts';
import type { AttachmentEntry, MessageSummary } from '../record/message-record.ts';
import { type AdmittingWorkspace, admitSender, type WorkspaceDecision } from '../sender/admit-sender.ts';
import { parseFromHeader } from '../sender/parse-from-header.ts';
import type { SenderEvidence } from '../sender/sender-policy.ts';
import type { SenderAuthenticationMode } from '../sender/sender-settings-schema.ts';
import type { IntakeWorkspace } from './intake-settings-schema.ts';

/** What the SMTP session knows about the transaction when DATA starts. */
export interface Transaction {
  remoteAddress: string | null;
  /** The HELO/EHLO name, for SPF. */
  helo: string | null;
  mailFrom: string | null;
  /** The accepted recipients' workspaces, in RCPT order, each once. */
  workspaces: readonly AdmittingWorkspace<IntakeWorkspace>[];
  rcptTo: readonly string[];
}

/** What is known of the message once DATA has ended and every check has run. */
export interface DecideInput {
  /** The id the 250 reply gives and the record is stored under. */
  queueId: string;
  walk: WalkResult;
  transaction: Transaction;
  /** SPF, DKIM, DMARC and ARC results with their alignment rule; null when no addressed workspace asked for them. */
  authentication: SenderEvidence | null;
  /** Bytes of the message as received. */
  size: number;
  /** Hex SHA-256 of the message as received. */
  rawSha256: string;
  /** ISO 8601: when the message was received. */
  now: string;
  /** Base URL of the record API, for the sourceEmail link. */
  publicUrl: string;
  policy: DecidePolicy;
}

/** The configuration the decision applies. */
export interface DecidePolicy {
  /** Supported attachments per message (smtp.maxAttachments). */
  maxAttachments: number;
  /** auth.senderAuthentication: the mode of workspaces that name none. */
  defaultMode: SenderAuthenticationMode;
  /** auth.trustedArcSealers. */
  trustedArcSealers: ReadonlySet<string>;
}

/** The message record and its uploads (the entries in state `queued`), ready to commit. */
export interface Decision {
  summary: MessageSummary;
  /** Entries in record order: one upload per admitting workspace and document, then the skipped parts. */
  entries: AttachmentEntry[];
  /**
   * Identifies this delivery: the SHA-256 of the raw bytes and the recipients. A sending
   * server that retries after a lost 250 sends the same bytes to the same recipients.
   */
  deliveryHash: string;
  /** Why each skipped entry was skipped, as a fixed kind, in entry order: for the attachments metric. */
  skipKinds: SkipKind[];
}

/**
 * What one DATA transaction comes to (DESIGN.md, Ingest rules 2 to 5): which workspaces
 * admit the sender, which parts are documents, and the record that says so. Pure: the walk,
 * the transaction and the verdicts in, the record and its uploads out; throws the
 * RefusalError the message is answered with (550 5.7.1, 451 4.7.0, 550 5.6.0, 550 5.7.0).
 *
 * Each workspace gets its own documents: its attachments (those of a ZIP archive only with
 * `archives: unpack`) and, by its `bodyAsDocument`, the message body: with `always` beside
 * them, with `whenNoAttachment` only when it gets none. The message is refused with 550 5.6.0
 * only when no admitting workspace gets anything, and with 550 5.7.0 when one gets more than
 * maxAttachments, the body document counted: it is an upload like any other.
 */
export function decide(input: DecideInput): Decision {
  const { walk, transaction, policy, now, queueId } = input;
  const sender = parseFromHeader(walk.fromHeaders);
  const { decisions, authentication } = admitSender({
    sender,
    workspaces: transaction.workspaces,
    defaultMode: policy.defaultMode,
    evidence: input.authentication,
    trustedArcSealers: policy.trustedArcSealers,
  });
  const senderAddress = sender.ok ? sender.address.address : null;

  const { documents, skipped } = selectAttachments(walk);
  // Files taken out of a ZIP archive are documents only for workspaces that unpack archives.
  const unpacks = new Set(
    transaction.workspaces
      .filter((workspace) => workspace.config.archives === 'unpack')
      .map((workspace) => workspace.config.identifier),
  );
  const attachmentsOf = (identifier: string) =>
    documents.filter((part) => !part.inArchive || unpacks.has(identifier));
  const body = findBodyDocument(walk);
  const bodyModes = new Map(
    transaction.workspaces.map((workspace) => [
      workspace.config.identifier,
      workspace.config.bodyAsDocument ?? 'never',
    ]),
  );
  /** Whether this workspace wants the body as a document (were it there to take). */
  const wantsBody = (identifier: string) => {
    const mode = bodyModes.get(identifier) ?? 'never';
    return mode === 'always' || (mode === 'whenNoAttachment' && attachmentsOf(identifier).length === 0);
  };
  const admitted = decisions.filter((decision) => decision.admitted).map((decision) => decision.identifier);
  const takers = new Set(admitted.filter(wantsBody));
  const takenBody = body?.part.stored ? body : null;
  const documentsOf = (identifier: string): WorkspaceDocuments => ({
    attachments: attachmentsOf(identifier),
    body: takers.has(identifier) ? takenBody : null,
  });

  const counts = admitted.map((identifier) => documentsOf(identifier)).map(countOf);
  const most = counts.reduce((top, count) => (count.total > top.total ? count : top), {
    total: 0,
    withBody: false,
  });
  if (most.total === 0) {
    throw new RefusalError('NO_SUPPORTED_ATTACHMENT', `no supported attachment: ${describeFound(walk)}`);
  }
  if (most.total > policy.maxAttachments) {
    throw new RefusalError(
      'TOO_MANY_ATTACHMENTS',
      `${most.total} supported attachments${most.withBody ? ' (the message body among them)' : ''}, at most ${policy.maxAttachments} are taken per message`,
    );
  }

  // A body some workspace wants but that was too large to store (collect-body.ts): say why.
  const bodySkipped: SkippedPart[] =
    body !== null && !body.part.stored && takers.size > 0
      ? [
          {
            part: body.part,
            kind: 'oversized',
            reason: `message body (${body.part.declaredType}) larger than the parsing service accepts`,
          },
        ]
      : [];
  const entries = recordEntries(decisions, documentsOf, [...skipped, ...bodySkipped], now);

  const summary: MessageSummary = {
    id: queueId,
    messageId: walk.messageId,
    receivedAt: now,
    remoteAddress: transaction.remoteAddress,
    envelope: { mailFrom: transaction.mailFrom, rcptTo: [...transaction.rcptTo] },
    from: senderAddress,
    subject: walk.subject,
    sourceEmail: `${input.publicUrl}/v1/messages/${queueId}/raw`,
    sourceEmailAddress: senderAddress,
    size: input.size,
    workspaces: decisions,
    authentication,
  };
  return {
    summary,
    entries,
    deliveryHash: deliveryHash(input.rawSha256, transaction.rcptTo),
    skipKinds: [...skipped, ...bodySkipped].map((skip) => skip.kind),
  };
}

/** What one workspace gets of the message. */
interface WorkspaceDocuments {
  attachments: readonly LeafPart[];
  /** The body as a document (bodyAsDocument), or null. */
  body: BodyDocument | null;
}

function countOf(documents: WorkspaceDocuments): { total: number; withBody: boolean } {
  const withBody = documents.body !== null;
  return { total: documents.attachments.length + (withBody ? 1 : 0), withBody };
}

/**
 * The record's attachments: one upload per admitting workspace and each of its documents in
 * message order (the body document where its body stands), then the skipped parts.
 */
function recordEntries(
  decisions: readonly WorkspaceDecision[],
  documentsOf: (identifier: string) => WorkspaceDocuments,
  skipped: readonly SkippedPart[],
  now: string,
): AttachmentEntry[] {
  const entries: AttachmentEntry[] = [];
  const entry = (
    fields: Omit<AttachmentEntry, 'entry' | 'documentIdentifier' | 'attempts' | 'warnings' | 'updatedAt'>,
  ) =>
    entries.push({
      ...fields,
      entry: entries.length,
      documentIdentifier: null,
      attempts: 0,
      warnings: [],
      updatedAt: now,
    });
  for (const decision of decisions) {
    if (!decision.admitted) continue;
    const { attachments, body } = documentsOf(decision.identifier);
    const uploads = attachments.flatMap((part) =>
      part.detectedType === null
        ? []
        : [
            {
              part,
              type: part.detectedType,
              fileName: sanitizeFileName(part.fileName, part.detectedType, part.index),
            },
          ],
    );
    if (body !== null) uploads.push(body);
    uploads.sort((a, b) => a.part.index - b.part.index);
    for (const { part, type, fileName } of uploads) {
      entry({
        part: part.index,
        path: part.path,
        fileName,
        originalFileName: part.fileName,
        contentType: part.declaredType,
        detectedType: documentMimeType(type),
        size: part.size,
        sha256: part.sha256,
        workspace: decision.identifier,
        state: 'queued',
        reason: null,
      });
    }
  }
  for (const { part, reason } of skipped) {
    entry({
      part: part.index,
      path: part.path,
      fileName: part.fileName ?? `part ${part.partNumber}`,
      originalFileName: part.fileName,
      contentType: part.declaredType,
      detectedType: null,
      size: part.size,
      sha256: part.sha256,
      workspace: null,
      state: 'skipped',
      reason,
    });
  }
  return entries;
}

function deliveryHash(rawSha256: string, rcptTo: readonly string[]): string {
  const recipients = rcptTo.map((rcpt) => rcpt.toLowerCase()).sort();
  return createHash('sha256').update(rawSha256).update('\n').update(recipients.join('\n')).digest('hex');
}
