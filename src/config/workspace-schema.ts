import { z } from 'zod';
import { nonEmptyString } from '../config-fields.ts';
import { routeKey } from '../intake/route-table.ts';
import { senderAuthenticationMode } from '../sender/auth-settings-schema.ts';
import { AllowListRuleError, compileAllowList } from '../sender/compile-allow-list.ts';
import { normalizeAddress } from '../sender/normalize-address.ts';
import { trackCompletionSchema, uploadFieldsSchema } from '../uploader/upload-options-schema.ts';

/**
 * One ingest address and where its attachments go. The address is stored normalised
 * (domain lower-cased, in ASCII, no trailing dot) as the route table compares it.
 */
export const workspaceSchema = z.strictObject({
  /** Workspace identifier, sent as `workspace`. */
  identifier: nonEmptyString(),
  /** The address senders write to; RCPT TO for any other address is refused. */
  ingestEmail: z.string().transform((text, ctx) => {
    const normalized = normalizeAddress(text);
    if (normalized === null) {
      ctx.addIssue({ code: 'custom', message: `expected an e-mail address, got ${JSON.stringify(text)}` });
      return z.NEVER;
    }
    return normalized.address;
  }),
  /**
   * Sender rules (`*@acme.example`, `ap@partner.example`); absent, null or [] admits anyone.
   * Compiled here so that a bad rule is a configuration problem, not a surprise per message.
   */
  whitelistIngestAddresses: z
    .array(
      z.string().superRefine((rule, ctx) => {
        try {
          compileAllowList([rule]);
        } catch (error) {
          if (!(error instanceof AllowListRuleError)) throw error;
          ctx.addIssue({ code: 'custom', message: error.message });
        }
      }),
    )
    .nullable()
    .optional(),
  /** Collection identifier, sent as `collection`. */
  collection: nonEmptyString().optional(),
  /** Document type identifier, sent as `documentType`. */
  documentType: nonEmptyString().optional(),
  /**
   * Form fields of POST /v3/documents under their spec names (src/uploader/upload-options-schema.ts);
   * `upload.collection` and `upload.documentType` win over the keys above.
   */
  upload: uploadFieldsSchema.optional(),
  /** Poll each document until the service has parsed it: true, or the polling bounds; default off. */
  trackCompletion: trackCompletionSchema,
  /**
   * How the header From is authenticated before the allow-list applies: off, aligned or dmarc;
   * absent: auth.senderAuthentication.
   */
  senderAuthentication: senderAuthenticationMode().optional(),
});

/** The workspaces, at least one, no two with the same ingest address. */
export const workspacesSchema = z
  .array(workspaceSchema)
  .min(1, { error: 'expected at least one workspace' })
  .superRefine((workspaces, ctx) => {
    const seen = new Map<string, number>();
    workspaces.forEach((workspace, index) => {
      const address = normalizeAddress(workspace.ingestEmail);
      if (address === null) return; // already reported by ingestEmail
      const key = routeKey(address);
      const first = seen.get(key);
      if (first === undefined) {
        seen.set(key, index);
        return;
      }
      ctx.addIssue({
        code: 'custom',
        path: [index, 'ingestEmail'],
        message: `${workspace.ingestEmail} is already the ingest address of workspaces[${first}]`,
      });
    });
  });
