import * as z from 'zod/mini';
import { type DeepReadonly, integer, nonEmptyString } from '../config-fields.ts';
import { RETRY_BASE_MS, RETRY_CAP_MS } from './retry-delay.ts';
import { subaddressesSchema } from './subaddress-fields.ts';
import { trackCompletionSchema, uploadFieldsSchema } from './upload-options-schema.ts';

/**
 * What the configuration says to the uploader: the `upload` section (the worker pool) and
 * the keys of a workspace that decide where its documents go and how. src/config composes
 * both into the whole file.
 */

/** The `upload` section. */
export const uploadSettingsSchema = z.strictObject({
  /** Uploads in flight per worker process; default 8. */
  concurrency: z._default(integer(1, 256), 8),
  /** Tries per attachment before it is marked failed, the first included; default 15. */
  attempts: z._default(integer(1, 100), 15),
  /** Milliseconds: the first retry waits up to this (full jitter), doubling per attempt; default 1000. */
  retryBaseDelay: z._default(integer(10, 60_000), RETRY_BASE_MS),
  /** Milliseconds: the longest backoff window between attempts; default 600000 (10 min). */
  retryMaxDelay: z._default(integer(100, 86_400_000), RETRY_CAP_MS),
  /**
   * When uploads succeed again after an outage, promote the retries still waiting out their
   * backoff instead of letting each wait its window (retry-promotion.ts); default true.
   */
  promoteAfterRecovery: z._default(z.boolean(), true),
  /**
   * Milliseconds a worker holds an upload's lock between renewals; a job whose worker died is
   * handed out again after about this long (BullMQ lockDuration and stalledInterval); default 30000.
   */
  stalledAfter: z._default(integer(1000, 600_000), 30_000),
  /**
   * How often a job may be re-run after its worker stopped mid-upload (a crash, or a stop past
   * closeTimeout) before it is failed as a poison job; default 3.
   */
  maxStalls: z._default(integer(1, 100), 3),
  /** Milliseconds stopping waits for uploads in flight before handing them back to the queue; default 30000. */
  closeTimeout: z._default(integer(0, 600_000), 30_000),
});

/** The validated, frozen `upload` section. */
export type UploadSettings = DeepReadonly<z.output<typeof uploadSettingsSchema>>;

/** A workspace's keys that the uploader reads, besides its identifier. */
export const uploadWorkspaceFields = {
  /** Collection identifier, sent as `collection`. */
  collection: z.optional(nonEmptyString()),
  /** Document type identifier, sent as `documentType`. */
  documentType: z.optional(nonEmptyString()),
  /**
   * Form fields of POST /v3/documents under their spec names (upload-options-schema.ts);
   * `upload.collection` and `upload.documentType` win over the keys above.
   */
  upload: z.optional(uploadFieldsSchema),
  /**
   * Upload fields by subaddress tag (`inbox+invoices@…` → `invoices`), over `upload` field by
   * field for mail addressed with that tag; a tag not listed uploads with `upload` alone.
   */
  subaddresses: z.optional(subaddressesSchema),
  /** Poll each document until the service has parsed it: true, or the polling bounds; default off. */
  trackCompletion: trackCompletionSchema,
};

const uploadWorkspaceSchema = z.object({ identifier: nonEmptyString(), ...uploadWorkspaceFields });

/** A workspace as the uploader sees it. */
export type UploadWorkspace = DeepReadonly<z.output<typeof uploadWorkspaceSchema>>;

/**
 * The workspaces in force, by identifier. Read at each job, not copied: a reload (SIGHUP)
 * applies to the next job. A Map is one.
 */
export interface UploadWorkspaces {
  get(identifier: string): UploadWorkspace | undefined;
}
