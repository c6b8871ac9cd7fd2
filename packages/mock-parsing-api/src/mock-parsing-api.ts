/**
 * `@ingest-gateway/mock-parsing-api`: a fake of the parsing API to test a client against,
 * with faults to inject (README.md). Everything a test needs is here; the other modules of
 * src/ are the mock's own and may change without notice.
 */
export { createMockApi, type MockApi, type MockApiOptions } from './create-mock-api.ts';
export type { DocumentListSettings, DocumentListSettingsInput } from './document-list-settings.ts';
export type { MockOrganizationSummary } from './document-side.ts';
export type { MockDocument, MockDocumentMeta } from './document-store.ts';
export type { DocumentTypeSeed, DocumentTypeStore, MockDocumentType } from './document-type-store.ts';
export { MAX_LATENCY_MS, type MockFault } from './faults.ts';
export type { OrganizationListSettings, OrganizationListSettingsInput } from './organization-lists.ts';
export type { ReceivedFile, ReceivedUpload, UploadListener } from './received-uploads.ts';
export type { HookAttempt, HookDelivery } from './resthook-dispatcher.ts';
export { RESTHOOK_EVENTS, type ResthookEvent } from './resthook-subscriptions.ts';
export { pdfWithPages } from './sample-pdf.ts';
export { toSnakeCase } from './to-snake-case.ts';
export {
  type ConfiguredWorkspace,
  combineSeeds,
  loadFixture,
  loadWorkspaceFixture,
  type MockFixture,
  WorkspaceFixtureError,
  type WorkspaceSeed,
  workspaceSeedsFromConfig,
} from './workspace-seed.ts';
export type { MockOrganization, MockWorkspace } from './workspace-shape.ts';
export type { WorkspaceRequest, WorkspaceStore } from './workspace-store.ts';
