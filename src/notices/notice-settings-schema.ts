import * as z from 'zod/mini';
import { integer } from '../config-fields.ts';

/** Whom a workspace tells what became of their mail (README, "Notices to senders"). */
export const NOTIFY_SENDER = ['never', 'onProblem', 'always'] as const;
export type NotifySender = (typeof NOTIFY_SENDER)[number];

/**
 * An smtp: or smtps: URL (smtps: is TLS from the first byte, port 465 by default); a user
 * and password in it log in to the relay. Never logged: only its host and port are.
 */
const relayUrl = () =>
  z.string().check(
    z.refine(
      (text) => {
        const url = URL.parse(text);
        return url !== null && (url.protocol === 'smtp:' || url.protocol === 'smtps:') && url.hostname !== '';
      },
      { error: 'expected an smtp:// or smtps:// URL, e.g. smtps://user:pass@relay.example:465' },
    ),
  );

/** One address with a domain, as a From header holds it: `Name <local@domain>` or `local@domain`. */
const fromAddress = () =>
  z.string().check(
    z.refine((text) => /^[^<>@\s]+@[^<>@\s]+$|^[^<>]*<[^<>@\s]+@[^<>@\s]+>\s*$/.test(text.trim()), {
      error: 'expected one address, e.g. "Document intake <no-reply@ingest.example.com>"',
    }),
  );

/** The `notices` section: the relay sender notices go out through, and as whom. */
export const noticeSettingsSchema = z.strictObject({
  /** The outbound relay: smtp://host:port or smtps://user:pass@host:465; no default (no notices). */
  smtp: z.optional(relayUrl()),
  /** The notices' From header; required with smtp. */
  from: z.optional(fromAddress()),
  /**
   * The envelope sender (MAIL FROM) of each notice; default "" (the null sender `<>`), so a
   * notice that cannot be delivered bounces to nobody and never starts a loop. Set an address
   * only for a relay that refuses the null sender.
   */
  envelopeFrom: z._default(z.union([z.literal(''), z.email()]), ''),
  /** Milliseconds before a notice the relay did not take is tried again, doubling; default 30000. */
  retryBaseDelay: z._default(integer(1, 3_600_000), 30_000),
  /** Milliseconds: the longest wait between two attempts; default 3600000 (1 h). */
  retryMaxDelay: z._default(integer(1, 86_400_000), 3_600_000),
  /** Milliseconds after the first attempt until a notice is given up; default 86400000 (24 h). */
  retryFor: z._default(integer(0, 7 * 86_400_000), 86_400_000),
  /** Milliseconds one conversation with the relay may take; default 30000. */
  timeout: z._default(integer(100, 300_000), 30_000),
});

export type NoticeSettings = z.output<typeof noticeSettingsSchema>;

/** The per-workspace key: which outcomes its senders are told about. */
export const noticeWorkspaceFields = {
  /**
   * `never` (default): no notice; `onProblem`: a notice when the message is held or a document
   * of it is skipped, rejected or failed; `always`: also a receipt when every document was taken.
   */
  notifySender: z.optional(z.enum(NOTIFY_SENDER, { error: `expected one of ${NOTIFY_SENDER.join(', ')}` })),
};

/** A workspace as notices see it. */
export interface NoticeWorkspace {
  readonly identifier: string;
  readonly notifySender?: NotifySender | undefined;
}

/** Problems of the notice settings against the workspaces: a workspace that notifies needs a relay and a From. */
export function noticeIssues(
  notices: Pick<NoticeSettings, 'smtp' | 'from'>,
  workspaces: readonly NoticeWorkspace[],
): { path: (string | number)[]; message: string }[] {
  const issues: { path: (string | number)[]; message: string }[] = [];
  if (notices.smtp !== undefined && notices.from === undefined) {
    issues.push({ path: ['notices', 'from'], message: 'is required with notices.smtp' });
  }
  workspaces.forEach((workspace, index) => {
    if ((workspace.notifySender ?? 'never') === 'never' || notices.smtp !== undefined) return;
    issues.push({
      path: ['workspaces', index, 'notifySender'],
      message: `is ${workspace.notifySender}, but notices.smtp (the relay notices go out through) is not set`,
    });
  });
  return issues;
}
