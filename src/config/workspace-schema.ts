import * as z from 'zod/mini';
import { nonEmptyString } from '../config-fields.ts';
import { intakeWorkspaceFields } from '../intake/intake-settings-schema.ts';
import { routeKey } from '../intake/route-table.ts';
import { noticeWorkspaceFields } from '../notices/notice-settings-schema.ts';
import { scanWorkspaceFields } from '../scan/scan-settings-schema.ts';
import { normalizeAddress } from '../sender/normalize-address.ts';
import { senderWorkspaceFields } from '../sender/sender-settings-schema.ts';
import { uploadWorkspaceFields } from '../uploader/upload-settings-schema.ts';

/**
 * One ingest address and where its attachments go: its identity here, whom it admits
 * (src/sender), which parts are its documents (src/intake), how they are uploaded
 * (src/uploader) and what a scanner's verdict does to its mail (src/scan). The address is stored
 * normalised (domain lower-cased, in ASCII, no trailing dot) as the route table compares it.
 */
export const workspaceSchema = z.strictObject({
  /** Workspace identifier, sent as `workspace`. */
  identifier: nonEmptyString(),
  /**
   * The address senders write to; RCPT TO for any other address is refused. Required unless
   * `discovery` is set and the service lists the workspace (then the service's address is
   * used when the entry names none).
   */
  ingestEmail: z.optional(
    z.pipe(
      z.string(),
      z.transform((text: string, ctx) => {
        const normalized = normalizeAddress(text);
        if (normalized === null) {
          ctx.issues.push({
            code: 'custom',
            message: `expected an e-mail address, got ${JSON.stringify(text)}`,
            input: text,
          });
          return z.NEVER;
        }
        return normalized.address;
      }),
    ),
  ),
  ...senderWorkspaceFields,
  ...intakeWorkspaceFields,
  ...uploadWorkspaceFields,
  ...scanWorkspaceFields,
  ...noticeWorkspaceFields,
});

/**
 * The workspaces, no two with the same ingest address. That there is at least one, and that
 * each has an ingestEmail, is checked with `discovery` in view (schema.ts).
 */
export const workspacesSchema = z.array(workspaceSchema).check(
  z.superRefine((workspaces, ctx) => {
    const seen = new Map<string, number>();
    workspaces.forEach((workspace, index) => {
      if (workspace.ingestEmail === undefined) return;
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
  }),
);
