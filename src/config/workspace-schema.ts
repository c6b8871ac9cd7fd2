import { z } from 'zod';
import { AllowListRuleError, compileAllowList } from '../whitelist/compile-allow-list.ts';
import { normalizeAddress } from '../whitelist/normalize-address.ts';
import { nonEmptyString } from './config-fields.ts';
import { routeKey } from './route-table.ts';

/**
 * Form fields of POST /v3/documents (parsing-api.md §4.2) sent with every attachment of the
 * workspace, under their spec names. All optional; absent means the service's default, and
 * null (where the spec allows it) means "the workspace setting applies".
 */
export const uploadFieldsSchema = z
  .strictObject({
    /** Hold the upload until parsing completes; the uploader sends false when absent. */
    wait: z.boolean().optional(),
    /** Fail a duplicate of an existing document without spending credits. */
    rejectDuplicates: z.boolean().nullable().optional(),
    /** ISO 639-1 code; `zh-cn` or `zh-tw` for Chinese. */
    language: nonEmptyString().optional(),
    lowPriority: z.boolean().optional(),
    /** Compact parse result; only with `wait: true`. */
    compact: z.boolean().optional(),
    /** Store nothing after parsing; only with `wait: true` (§7.5). */
    deleteAfterParse: z.boolean().optional(),
    enableValidationTool: z.boolean().optional(),
    /** true: OCR; false: text layer; null/absent: the service decides. */
    useOcr: z.boolean().nullable().optional(),
    /** Hint added to the language-model prompt for these documents. */
    llmHint: nonEmptyString().optional(),
    /** ISO 8601 date-time at which the service deletes the document. */
    expiryTime: nonEmptyString().optional(),
    /** Client identifier given to every document of the workspace; need not be unique. */
    customIdentifier: nonEmptyString().optional(),
  })
  .superRefine((fields, ctx) => {
    if (fields.deleteAfterParse === true && fields.wait !== true) {
      ctx.addIssue({
        code: 'custom',
        path: ['deleteAfterParse'],
        message: 'needs wait: true (the service refuses deleteAfterParse without it)',
      });
    }
  });

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
  upload: uploadFieldsSchema.optional(),
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
