import type { Logger } from '../logger.ts';
import type { DocumentStore } from './document-store.ts';
import type { FaultQueue } from './faults.ts';
import type { UploadLog } from './received-uploads.ts';

/** What the mock's route handlers share: one per mock instance, built by createMockApi. */
export interface MockContext {
  apiKey: string;
  logger: Logger;
  store: DocumentStore;
  uploads: UploadLog;
  faults: FaultQueue;
  /** Largest accepted file in bytes (the service's 20 MB). */
  maxFileBytes: number;
  /** Keep each upload's bytes in `uploads` (tests); off for a long-running sidecar. */
  retainFileBytes: boolean;
}
