/** What happened to one attachment for one workspace; the states of DESIGN.md. */
export type AttachmentState = 'queued' | 'uploading' | 'uploaded' | 'rejected' | 'failed' | 'skipped';

export interface AttachmentEntry {
  /** Position of this entry in the record's `attachments`. */
  entry: number;
  /** Leaf number of the part in the message. */
  part: number;
  fileName: string;
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
}

export interface WorkspaceDecision {
  identifier: string;
  /** Whether the sender was admitted by this workspace's allow-list. */
  admitted: boolean;
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
