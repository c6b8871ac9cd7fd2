import { createHash } from 'node:crypto';
import { RefusalError } from '../errors.ts';
import { type BodyDocument, findBodyDocument } from '../mail/body-document.ts';
import { documentMimeType } from '../mail/detect/detect-type.ts';
import type { LeafPart } from '../mail/leaf-part.ts';
import { sanitizeFileName } from '../mail/sanitize-file-name.ts';
import {
  describeFound,
  lockedPdfSkip,
  type SkipKind,
  type SkippedPart,
  selectAttachments,
} from '../mail/select-attachments.ts';
import type { WalkResult } from '../mail/walk-message.ts';
import type { AttachmentEntry, HoldReason, MessageSummary } from '../record/message-record.ts';
import type { ScanRecord } from '../scan/scan-record-schema.ts';
import { admitSender } from '../sender/admit-sender.ts';
import { parseFromHeader } from '../sender/parse-from-header.ts';
import type { SenderEvidence } from '../sender/sender-policy.ts';
import type { SenderAuthenticationMode } from '../sender/sender-settings-schema.ts';
import { forwardingProviderOf, readConfirmation } from './forwarding-confirmation.ts';
import type { IntakeWorkspace } from './intake-settings-schema.ts';
import { messageFacts } from './message-facts.ts';
import type { RoutedWorkspace } from './route-table.ts';

/** What the SMTP session knows about the transaction when DATA starts. */
export interface Transaction {
  remoteAddress: string | null;
  /** The HELO/EHLO name, for SPF. */
  helo: string | null;
  mailFrom: string | null;
  /** The accepted recipients' workspaces, in RCPT order, each once, with the tag it was addressed by. */
  workspaces: readonly RoutedWorkspace<IntakeWorkspace>[];
  rcptTo: readonly string[];
  /**
   * The recipients are postmaster addresses (RFC 5321 4.5.1), with no workspace among them: the
   * message is kept for the operator, never uploaded and never refused for what it holds.
   */
  postmaster?: boolean;
  /** How the message came in: `replay` from a file (`ingest-gateway replay`); absent: over SMTP. */
  via?: 'replay';
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
  /** What the scanners said, as the record keeps it; null when no scanner is configured. */
  scan: ScanRecord | null;
  /** Why the message is held (a scanner's verdict under a `hold` policy): nothing is uploaded; null: taken as usual. */
  hold?: { reason: HoldReason; workspace: string } | null;
  /**
   * The text of the top-level body, when the From names a forwarding confirmation's sender
   * (forwarding-confirmation.ts) and the intake read it; absent or null otherwise.
   */
  bodyText?: string | null;
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
 * What one DATA transaction comes to (docs/architecture.md, "The decision"): which workspaces
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
  const { walk, transaction, policy, now } = input;
  const sender = parseFromHeader(walk.fromHeaders);
  // A forwarding confirmation is held whatever the allow-lists say (as if each held unlisted
  // senders); one that fails a workspace's sender authentication is refused as any mail is.
  const provider = forwardingProviderOf(sender);
  const { decisions, authentication, holdingFor } = admitSender({
    sender,
    workspaces: provider ? transaction.workspaces.map(holdingUnlisted) : transaction.workspaces,
    defaultMode: policy.defaultMode,
    evidence: input.authentication,
    trustedArcSealers: policy.trustedArcSealers,
  });
  const summaryOf = (hold: MessageSummary['hold'] | null): MessageSummary => ({
    ...messageFacts(input, sender),
    workspaces: decisions,
    authentication,
    // Absent when no scanner is configured, as in records written before scanning existed.
    ...(input.scan === null ? {} : { scan: input.scan }),
    // Absent for a message not signed, as in records written before S/MIME was read.
    ...(walk.smime === undefined ? {} : { smime: walk.smime }),
    ...(hold ? { state: 'held' as const, hold } : {}),
  });

  const { documents, skipped } = selectAttachments(walk);
  if (provider) {
    // Never uploaded, whatever it holds: no document is queued or held, only skipped parts listed.
    const holders = [
      ...holdingFor,
      ...decisions.filter((decision) => decision.admitted).map((decision) => decision.identifier),
    ];
    const hold = {
      reason: 'forwarding_confirmation' as const,
      workspace: holders[0] ?? transaction.workspaces[0]?.config.identifier ?? '',
      confirmation: readConfirmation(provider, walk.subject, input.bodyText ?? null),
    };
    return {
      summary: summaryOf(hold),
      entries: recordEntries([], () => ({ attachments: [], body: null }), skipped, now, new Map()),
      deliveryHash: deliveryHash(input.rawSha256, transaction.rcptTo),
      skipKinds: skipped.map((skip) => skip.kind),
    };
  }
  // Files taken out of a ZIP archive are documents only for workspaces that unpack archives.
  const unpacks = new Set(
    transaction.workspaces
      .filter((workspace) => workspace.config.archives === 'unpack')
      .map((workspace) => workspace.config.identifier),
  );
  // Encrypted PDFs are documents only for workspaces that upload them.
  const unlocks = new Set(
    transaction.workspaces
      .filter((workspace) => workspace.config.encryptedPdf === 'upload')
      .map((workspace) => workspace.config.identifier),
  );
  // Decrypted S/MIME content is only for the workspaces whose key opened it.
  const readable = (part: LeafPart, identifier: string) =>
    part.decryptedFor === undefined || part.decryptedFor.includes(identifier);
  const attachmentsOf = (identifier: string) =>
    documents.filter(
      (part) =>
        (!part.inArchive || unpacks.has(identifier)) &&
        (part.encrypted !== true || unlocks.has(identifier)) &&
        readable(part, identifier),
    );
  const body = findBodyDocument(walk);
  const bodyModes = new Map(
    transaction.workspaces.map((workspace) => [workspace.config.identifier, workspace.config.bodyAsDocument]),
  );
  /** Whether this workspace wants the body as a document (were it there to take). */
  const wantsBody = (identifier: string) => {
    const mode = bodyModes.get(identifier);
    return mode === 'always' || (mode === 'whenNoAttachment' && attachmentsOf(identifier).length === 0);
  };
  // Mail held for want of a listed sender is kept for the workspaces that would take it once released.
  const admitted =
    holdingFor.length > 0
      ? holdingFor
      : decisions.filter((decision) => decision.admitted).map((decision) => decision.identifier);
  // An encrypted PDF no admitting workspace uploads is recorded as skipped, with why.
  const lockedSkipped = documents
    .filter((part) => part.encrypted === true && !admitted.some((identifier) => unlocks.has(identifier)))
    .map(lockedPdfSkip);
  const takers = new Set(admitted.filter(wantsBody));
  const takenBody = body?.part.stored ? body : null;
  const documentsOf = (identifier: string): WorkspaceDocuments => ({
    attachments: attachmentsOf(identifier),
    body:
      takers.has(identifier) && takenBody !== null && readable(takenBody.part, identifier) ? takenBody : null,
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
  const partsSkipped = [...skipped, ...lockedSkipped].sort((a, b) => a.part.index - b.part.index);
  const allSkipped = [...partsSkipped, ...bodySkipped];
  // The tag each workspace was addressed by (one per transaction: session-checks.ts).
  const tags = new Map(
    transaction.workspaces.flatMap((workspace) =>
      workspace.subaddress === undefined
        ? []
        : [[workspace.config.identifier, workspace.subaddress] as const],
    ),
  );
  // The document type whose address reached each workspace (one per transaction too).
  const documentTypes = new Map(
    transaction.workspaces.flatMap((workspace) =>
      workspace.documentType === undefined
        ? []
        : [[workspace.config.identifier, workspace.documentType] as const],
    ),
  );
  const uploads = recordEntries(admitted, documentsOf, allSkipped, now, tags, documentTypes);
  const hold =
    input.hold ??
    (holdingFor[0] === undefined ? null : { reason: 'sender_not_listed' as const, workspace: holdingFor[0] });
  // A held message keeps its documents in the record, each held: none is queued for upload.
  const entries = hold
    ? uploads.map((entry) =>
        entry.state === 'queued'
          ? { ...entry, state: 'held' as const, reason: `held: ${hold.reason}` }
          : entry,
      )
    : uploads;

  const summary = summaryOf(hold);
  return {
    summary,
    entries,
    deliveryHash: deliveryHash(input.rawSha256, transaction.rcptTo),
    skipKinds: allSkipped.map((skip) => skip.kind),
  };
}

/** The workspace as one that holds what its allow-list does not name. */
function holdingUnlisted(workspace: RoutedWorkspace<IntakeWorkspace>): RoutedWorkspace<IntakeWorkspace> {
  if (workspace.config.unlistedSenders === 'hold') return workspace;
  return { ...workspace, config: { ...workspace.config, unlistedSenders: 'hold' } };
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
 * The record's attachments: one upload per admitting (or holding) workspace and each of its documents in
 * message order (the body document where its body stands), then the skipped parts.
 */
function recordEntries(
  takers: readonly string[],
  documentsOf: (identifier: string) => WorkspaceDocuments,
  skipped: readonly SkippedPart[],
  now: string,
  /** The subaddress tag of each workspace addressed with one. */
  tags: ReadonlyMap<string, string>,
  /** The document type of each workspace reached by a document type's address. */
  documentTypes: ReadonlyMap<string, string> = new Map(),
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
  for (const identifier of takers) {
    const { attachments, body } = documentsOf(identifier);
    const tag = tags.get(identifier);
    const documentType = documentTypes.get(identifier);
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
        workspace: identifier,
        // Absent without a tag, as in records written before subaddresses were read.
        ...(tag === undefined ? {} : { subaddress: tag }),
        ...(documentType === undefined ? {} : { documentType }),
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

/** Identifies a delivery: the same bytes to the same recipients (see Decision.deliveryHash). */
export function deliveryHash(rawSha256: string, rcptTo: readonly string[]): string {
  const recipients = rcptTo.map((rcpt) => rcpt.toLowerCase()).sort();
  return createHash('sha256').update(rawSha256).update('\n').update(recipients.join('\n')).digest('hex');
}
