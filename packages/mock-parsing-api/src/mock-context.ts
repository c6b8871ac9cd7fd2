import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import type { CreditMeter } from './credit-meter.ts';
import type { DocumentListSettings } from './document-list-settings.ts';
import type { DocumentStore } from './document-store.ts';
import type { DocumentTypeStore } from './document-type-store.ts';
import type { FaultQueue } from './faults.ts';
import type { OrganizationListSettings } from './organization-lists.ts';
import type { ParseRunner } from './parse-runner.ts';
import type { UploadLog } from './received-uploads.ts';
import type { ResthookDispatcher } from './resthook-dispatcher.ts';
import type { SubscriptionStore } from './resthook-subscriptions.ts';
import type { WorkspaceSettings } from './workspace-shape.ts';
import type { WorkspaceStore } from './workspace-store.ts';

/** What the mock's route handlers share: one per mock instance, built by createMockApi. */
export interface MockContext {
  apiKey: string;
  logger: Logger;
  store: DocumentStore;
  uploads: UploadLog;
  faults: FaultQueue;
  /** Uploads a `commitDelayMs` fault holds: ms between reading the form and creating the document. */
  lateCommits: WeakMap<IncomingMessage, number>;
  /** How `GET /v3/documents` lists; replaced as a whole by `PATCH /_mock/settings`. */
  documentList: DocumentListSettings;
  /** How the organization lists (workspaces, document types) answer; replaced by `PATCH /_mock/settings`. */
  organizationLists: OrganizationListSettings;
  /** The document types of `GET /v3/document_types`. */
  documentTypes: DocumentTypeStore;
  /** Largest accepted file in bytes (the service's 20 MB). */
  maxFileBytes: number;
  /** Keep each upload's bytes in `uploads` (tests); off for a long-running sidecar. */
  retainFileBytes: boolean;
  /** The workspaces of `/v3/workspaces/{identifier}` and the requests made to them. */
  workspaces: WorkspaceStore;
  /** A workspace's upload-relevant settings, for the document side; undefined when unknown. */
  workspaceSettings(identifier: string): WorkspaceSettings | undefined;
  /** Aborted by close(): injected latency, processing and resthook retries stop waiting. */
  closed: AbortSignal;
  /** Finishes pending documents (processing time, credits, events). */
  parses: ParseRunner;
  credits: CreditMeter;
  resthooks: { subscriptions: SubscriptionStore; dispatcher: ResthookDispatcher };
  /** The organization of documents whose workspace the mock does not know; its key signs their events. */
  organization: { identifier: string; name: string; resthookSignatureKey: string };
}
