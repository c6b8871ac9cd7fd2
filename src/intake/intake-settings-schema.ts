import { z } from 'zod/mini';
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
};

/** A workspace as the intake sees it: whom it admits (src/sender) and what it takes. */
export type IntakeWorkspace = SenderWorkspace & {
  /** Absent reads as `skip`. */
  readonly archives?: 'unpack' | 'skip';
  /** Absent reads as `never`. */
  readonly bodyAsDocument?: BodyAsDocument;
};

/** Whether a workspace takes the message body at all, so the walk must store it. */
export function takesBody(workspace: IntakeWorkspace): boolean {
  return (workspace.bodyAsDocument ?? 'never') !== 'never';
}
