import * as z from 'zod/mini';

/**
 * The Workspace as the service returns it (docs/parsing-api.md, "Workspaces"), read tolerantly as the
 * uploader reads Documents: fields the commands do not use pass through untouched (so
 * `workspace get` prints everything the service sent), and only `identifier` is insisted
 * on. `ingestEmail` and `whitelistIngestAddresses` are the two `workspace sync` compares.
 */
export const serviceWorkspaceSchema = z.looseObject({
  identifier: z.string().check(z.minLength(1)),
  name: z.nullish(z.string()),
  visibility: z.nullish(z.string()),
  ingestEmail: z.nullish(z.string()),
  whitelistIngestAddresses: z.nullish(z.array(z.string())),
});

export type ServiceWorkspace = z.infer<typeof serviceWorkspaceSchema>;

/** The body of `PATCH /v3/workspaces/{identifier}`; every field optional. */
export interface WorkspaceUpdate {
  name?: string;
  visibility?: 'organization' | 'private';
  rejectInvalidDocuments?: boolean;
  /** null: no workspace-level setting. */
  rejectDuplicates?: boolean | null;
  /** Document type identifiers. */
  documentTypes?: string[];
  /** null: any sender. */
  whitelistIngestAddresses?: string[] | null;
  /** The document splitter's identifier. */
  documentSplitter?: string;
}
