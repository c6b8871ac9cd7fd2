import { createHash } from 'node:crypto';
import { RefusalError } from '../errors.ts';
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
import type { AuthenticationResults } from '../sender/authentication-results.ts';
import { parseFromHeader } from '../sender/parse-from-header.ts';
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
  /** SPF, DKIM, DMARC and ARC results; null when no addressed workspace asked for them. */
  authentication: AuthenticationResults | null;
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
 */
export function decide(input: DecideInput): Decision {
  const { walk, transaction, policy, now, queueId } = input;
  const sender = parseFromHeader(walk.fromHeaders);
  const { decisions, authentication } = admitSender({
    sender,
    workspaces: transaction.workspaces,
    defaultMode: policy.defaultMode,
    results: input.authentication,
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
  const documentsOf = (identifier: string) =>
    documents.filter((part) => !part.inArchive || unpacks.has(identifier));
  const counts = decisions
    .filter((decision) => decision.admitted)
    .map((decision) => documentsOf(decision.identifier).length);
  const most = Math.max(0, ...counts);
  if (most === 0) {
    throw new RefusalError('NO_SUPPORTED_ATTACHMENT', `no supported attachment: ${describeFound(walk)}`);
  }
  if (most > policy.maxAttachments) {
    throw new RefusalError(
      'TOO_MANY_ATTACHMENTS',
      `${most} supported attachments, at most ${policy.maxAttachments} are taken per message`,
    );
  }

  const entries = recordEntries(decisions, documentsOf, skipped, now);

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
    skipKinds: skipped.map((skip) => skip.kind),
  };
}

/** The record's attachments: one upload per admitting workspace and its documents, then the skipped parts. */
function recordEntries(
  decisions: readonly WorkspaceDecision[],
  documentsOf: (identifier: string) => readonly LeafPart[],
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
    for (const part of documentsOf(decision.identifier)) {
      const type = part.detectedType;
      if (type === null) continue;
      entry({
        part: part.index,
        path: part.path,
        fileName: sanitizeFileName(part.fileName, type, part.index),
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
