import * as z from 'zod/mini';
import { nonEmptyString } from '../config-fields.ts';
import type { ScanWorkspace } from '../scan/scan-settings-schema.ts';
import type { SenderWorkspace } from '../sender/sender-settings-schema.ts';

/** Whether the message body is a document: never, only when nothing else is, or always. */
export type BodyAsDocument = 'never' | 'whenNoAttachment' | 'always';

/** A workspace's keys that decide which parts of a message are its documents (src/intake). */
export const intakeWorkspaceFields = {
  /**
   * What a ZIP archive is to this workspace: `unpack` makes each supported file inside a
   * document, `skip` skips the archive (the parsing service takes no archives); default skip.
   */
  archives: z._default(z.enum(['unpack', 'skip']), 'skip'),
  /**
   * Whether the body of the message (its HTML, else its text, in UTF-8) is a document named
   * from the subject: `always`, `whenNoAttachment` (only when this workspace gets no other
   * document, so an invoice written in the mail is taken instead of refused), or `never`;
   * default never.
   */
  bodyAsDocument: z._default(z.enum(['never', 'whenNoAttachment', 'always']), 'never'),
  /**
   * What an encrypted (password-protected) PDF is to this workspace: `skip` records it as
   * skipped (`encrypted_pdf`), since the parsing service cannot read it; `upload` sends it
   * anyway, for a service set up to open it; default skip.
   */
  encryptedPdf: z._default(z.enum(['skip', 'upload']), 'skip'),
  /**
   * The PEM files of this workspace's S/MIME private key and certificate: encrypted mail
   * (S/MIME enveloped-data) sent to that certificate is decrypted and its documents taken, for
   * this workspace only. Absent: encrypted mail is skipped (`encrypted_smime`). The key is read
   * when encrypted mail arrives, never logged.
   */
  smime: z.optional(z.strictObject({ key: nonEmptyString(), cert: nonEmptyString() })),
};

/** Where a workspace's S/MIME key and certificate are (PEM files). */
export interface SmimeFiles {
  readonly key: string;
  readonly cert: string;
}

/** A workspace as the intake sees it: whom it admits (src/sender), what it takes and what a scan does to it (src/scan). */
export type IntakeWorkspace = SenderWorkspace &
  ScanWorkspace & {
    readonly archives: 'unpack' | 'skip';
    readonly bodyAsDocument: BodyAsDocument;
    readonly encryptedPdf: 'skip' | 'upload';
    readonly smime?: SmimeFiles | undefined;
  };

/** Whether a workspace takes the message body at all, so the walk must store it. */
export function takesBody(workspace: IntakeWorkspace): boolean {
  return workspace.bodyAsDocument !== 'never';
}
