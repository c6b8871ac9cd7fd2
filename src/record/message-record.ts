import type { WorkspaceDecision } from '../sender/admit-sender.ts';
import type { SenderAuthentication } from '../sender/sender-policy.ts';

export type { WorkspaceDecision };

/** What happened to one attachment for one workspace; the states of DESIGN.md. */
export type AttachmentState = 'queued' | 'uploading' | 'uploaded' | 'rejected' | 'failed' | 'skipped';

export interface AttachmentEntry {
  /** Position of this entry in the record's `attachments`. */
  entry: number;
  /** Leaf number of the part in the message. */
  part: number;
  /** The name sent upstream (an uploaded part) or shown (a skipped one): sanitised, its extension matching the detected type. */
  fileName: string;
  /** The name as the message gave it, decoded, not sanitised; null when it gave none (absent in records written before it existed). */
  originalFileName?: string | null;
  /**
   * Where the part came from: its MIME part and name, and for a file taken out of a container
   * the container too, e.g. `part 3 > winmail.dat > contract.pdf` (absent in records written
   * before it existed).
   */
  path?: string;
  /** Content-Type as the message declared it. */
  contentType: string;
  /** MIME type of the document the bytes are (sent upstream); null for a part of no supported type. */
  detectedType: string | null;
  size: number;
  sha256: string;
  /** Workspace identifier; null for a skipped part, which no workspace receives. */
  workspace: string | null;
  state: AttachmentState;
  reason: string | null;
  documentIdentifier: string | null;
  attempts: number;
  warnings: Array<{ warningCode: string; warningDetail?: string | null | undefined }>;
  updatedAt: string;
  /** The Document's `error` when the service rejected the document (state `rejected`). */
  error?: { errorCode: string; errorDetail: string } | null;
  /** The service's RequestError of a refused request (state `failed`): its type and each field's error. */
  requestError?: {
    type: string;
    errors: Array<{ attr?: string | null | undefined; code: string; detail: string }>;
  } | null;
  /** Parse outcome (meta.ready, meta.failed, meta.readyDt), from a wait: true answer or completion tracking. */
  ready?: boolean | null;
  failed?: boolean | null;
  readyDt?: string | null;
  /** Completion tracking (workspaces[].trackCompletion): where polling for the parse outcome stands. */
  completion?: CompletionStatus | null;
}

export interface CompletionStatus {
  /** `polling`: a poll is scheduled; the others are final. */
  state: 'polling' | 'ready' | 'failed' | 'not-found' | 'gave-up' | 'error';
  /** Polls made so far. */
  polls: number;
  /** ISO 8601; when the next poll is due, while `polling`. */
  nextPollAt: string | null;
  /** Why polling stopped, or the last transient failure while polling. */
  reason: string | null;
}

/** The static part of a message record, written once when the message is accepted. */
export interface MessageSummary {
  id: string;
  /** The Message-ID header, without angle brackets. */
  messageId: string | null;
  receivedAt: string;
  remoteAddress: string | null;
  envelope: { mailFrom: string | null; rcptTo: string[] };
  /** Header From address. */
  from: string | null;
  subject: string | null;
  /** URL of the stored e-mail (GET /v1/messages/{id}/raw). */
  sourceEmail: string;
  /** The e-mail's From address, as the parsing service records it for e-mailed documents. */
  sourceEmailAddress: string | null;
  size: number;
  workspaces: WorkspaceDecision[];
  /** SPF, DKIM, DMARC and ARC results and the verdicts; null when no workspace asked for them. */
  authentication: SenderAuthentication | null;
}

export interface MessageRecord extends MessageSummary {
  /** `committed`: record and blobs stored; `enqueued`: the upload jobs exist too. */
  status: 'committed' | 'enqueued';
  attachments: AttachmentEntry[];
}

/** Where a document the service created came from. */
export interface DocumentSource {
  documentIdentifier: string;
  messageId: string;
  entry: number;
  workspace: string;
  fileName: string;
  sourceEmail: string;
  sourceEmailAddress: string | null;
}
