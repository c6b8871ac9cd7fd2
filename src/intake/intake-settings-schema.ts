import { z } from 'zod';
import type { SenderWorkspace } from '../sender/sender-settings-schema.ts';

/** A workspace's keys that decide which parts of a message are its documents (src/intake). */
export const intakeWorkspaceFields = {
  /**
   * What a ZIP archive is to this workspace: `unpack` makes each supported file inside a
   * document, `skip` skips the archive (the parsing service takes no archives); default skip.
   */
  archives: z.enum(['unpack', 'skip']).default('skip'),
};

/** A workspace as the intake sees it: whom it admits (src/sender) and what it takes. */
export type IntakeWorkspace = SenderWorkspace & {
  /** Absent reads as `skip`. */
  readonly archives?: 'unpack' | 'skip';
};
