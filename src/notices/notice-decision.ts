import type { AttachmentEntry, MessageRecord } from '../record/message-record.ts';
import { isSettled } from '../record/message-record.ts';
import type { LoopHeaders } from './loop-headers.ts';
import type { NotifySender } from './notice-settings-schema.ts';

/**
 * Who gets a notice, and about what: a pure function of the message record, the workspaces'
 * `notifySender` and the received message's header (README, "Notices to senders"). Every rule that
 * keeps a notice from starting a loop or landing on someone who never wrote (RFC 3834
 * section 2; backscatter) is here, in the order the README lists them.
 */

export interface NoticeFacts {
  record: MessageRecord;
  /** The workspace's notifySender; never for a workspace no longer configured. */
  modeOf: (workspace: string) => NotifySender;
  /** The received message's loop-relevant header fields; null when they could not be read. */
  headers: LoopHeaders | null;
}

export type NoticeKind = 'held' | 'problem' | 'receipt';

/** Why no notice goes out: the `reason` of the log line and the metric. */
export const NO_NOTICE_REASONS = [
  'not_wanted',
  'not_settled',
  'postmaster',
  'replayed',
  'held_as_malware_or_spam',
  'discarded',
  'null_sender',
  'automatic_sender',
  'header_unreadable',
  'auto_submitted',
  'bulk_precedence',
  'mailing_list',
  'unauthenticated_sender',
] as const;
export type NoNoticeReason = (typeof NO_NOTICE_REASONS)[number];

export type NoticeDecision =
  | {
      send: true;
      /** The envelope sender of the received message: where the notice goes. */
      to: string;
      kind: NoticeKind;
      /** The entries the notice lists, in record order: the workspaces' documents, then the skipped parts worth telling. */
      documents: AttachmentEntry[];
      /** The workspaces the notice speaks for. */
      workspaces: string[];
    }
  | { send: false; reason: NoNoticeReason };

/** Precedence values of mail nobody expects an automatic answer to (RFC 3834 section 2). */
const BULK_PRECEDENCE = new Set(['bulk', 'junk', 'list']);

/**
 * Skipped parts a sender should hear about: a file it attached that was not taken. Inline
 * images, signatures, reports, pointers and the archives whose files were taken are the
 * message's furniture, not its documents.
 */
export function isNotableSkip(entry: Pick<AttachmentEntry, 'state' | 'reason'>): boolean {
  if (entry.state !== 'skipped') return false;
  const reason = entry.reason ?? '';
  return (
    reason.startsWith('unsupported type') ||
    reason === 'empty part' ||
    reason.startsWith('encrypted_pdf') ||
    reason.startsWith('encrypted_smime')
  );
}

const PROBLEM_STATES: ReadonlySet<AttachmentEntry['state']> = new Set(['rejected', 'failed']);

/**
 * The part of the decision the record alone settles: whether a workspace wants its sender
 * told now, and which. The intake and the upload workers ask it before queueing a notice, so
 * a message nobody is to be told about costs no job.
 */
export function wantedNotice(
  record: MessageRecord,
  modeOf: NoticeFacts['modeOf'],
): { held: boolean; workspaces: string[] } | { reason: NoNoticeReason } {
  if (record.keptFor === 'postmaster') return { reason: 'postmaster' };
  // Mail run again from a file: its sender was told (or not) when it first came in.
  if (record.via === 'replay') return { reason: 'replayed' };
  if (record.hold?.reason === 'malware' || record.hold?.reason === 'spam') {
    return { reason: 'held_as_malware_or_spam' };
  }
  if (record.state === 'discarded') return { reason: 'discarded' };
  const held = record.state === 'held';
  const workspaces = held ? heldWorkspaces(record, modeOf) : settledWorkspaces(record, modeOf);
  if (workspaces === 'not_settled') return { reason: 'not_settled' };
  if (workspaces.length === 0) return { reason: 'not_wanted' };
  return { held, workspaces };
}

export function decideNotice({ record, modeOf, headers }: NoticeFacts): NoticeDecision {
  const no = (reason: NoNoticeReason): NoticeDecision => ({ send: false, reason });
  const wanted = wantedNotice(record, modeOf);
  if ('reason' in wanted) return no(wanted.reason);
  const { held } = wanted;

  const to = record.envelope.mailFrom ?? '';
  if (to === '') return no('null_sender');
  if (isAutomaticSender(to)) return no('automatic_sender');
  if (headers === null) return no('header_unreadable');
  if (headers.autoSubmitted !== null && headers.autoSubmitted !== 'no') return no('auto_submitted');
  if (headers.precedence !== null && BULK_PRECEDENCE.has(headers.precedence)) return no('bulk_precedence');
  if (headers.listFields.length > 0) return no('mailing_list');
  // A held message's sender has not been admitted: a forged envelope sender would make the
  // notice backscatter to someone who never wrote.
  if (held && !envelopeSenderAuthenticated(record)) return no('unauthenticated_sender');

  const workspaces = new Set(wanted.workspaces);
  const documents = record.attachments.filter(
    (entry) => (entry.workspace !== null && workspaces.has(entry.workspace)) || isNotableSkip(entry),
  );
  const kind: NoticeKind = held
    ? 'held'
    : documents.some((entry) => PROBLEM_STATES.has(entry.state) || isNotableSkip(entry))
      ? 'problem'
      : 'receipt';
  return { send: true, to, kind, documents, workspaces: wanted.workspaces };
}

/** A held message: the workspace whose policy held it, if it notifies at all (a hold is a problem). */
function heldWorkspaces(record: MessageRecord, modeOf: NoticeFacts['modeOf']): string[] {
  const workspace = record.hold?.workspace;
  return workspace !== undefined && modeOf(workspace) !== 'never' ? [workspace] : [];
}

/**
 * A message taken (or released): once every entry is final, the workspaces that want a
 * notice of how their documents went: `always` ones, and `onProblem` ones when one of their
 * documents was rejected or failed or an attached file was skipped.
 */
function settledWorkspaces(record: MessageRecord, modeOf: NoticeFacts['modeOf']): string[] | 'not_settled' {
  if (!isSettled(record)) return 'not_settled';
  const skippedFile = record.attachments.some(isNotableSkip);
  const workspaces = [
    ...new Set(record.attachments.flatMap((entry) => (entry.workspace === null ? [] : [entry.workspace]))),
  ];
  return workspaces.filter((workspace) => {
    const mode = modeOf(workspace);
    if (mode === 'always') return true;
    if (mode === 'never') return false;
    return (
      skippedFile ||
      record.attachments.some((entry) => entry.workspace === workspace && PROBLEM_STATES.has(entry.state))
    );
  });
}

/**
 * Senders that are software answering for a mailbox or a list, never a person (RFC 3834
 * section 2): MAILER-DAEMON, and a list's owner-… and …-request addresses.
 */
export function isAutomaticSender(address: string): boolean {
  const at = address.lastIndexOf('@');
  const local = (at === -1 ? address : address.slice(0, at)).toLowerCase();
  return local === 'mailer-daemon' || local.startsWith('owner-') || local.endsWith('-request');
}

/**
 * Whether the record shows that the envelope sender's domain sent this message: SPF passed
 * for that domain, or the sender authentication verdict passed for a From domain that is the
 * envelope sender's. Without sender authentication on the record, nothing is shown.
 */
export function envelopeSenderAuthenticated(
  record: Pick<MessageRecord, 'envelope' | 'authentication'>,
): boolean {
  const auth = record.authentication;
  const mailFrom = record.envelope.mailFrom ?? '';
  const at = mailFrom.lastIndexOf('@');
  if (auth === null || at === -1) return false;
  const domain = mailFrom
    .slice(at + 1)
    .toLowerCase()
    .replace(/\.$/, '');
  if (auth.results.spf.result === 'pass' && auth.results.spf.domain === domain) return true;
  const passed = Object.values(auth.verdicts).some((verdict) => verdict?.outcome === 'pass');
  return passed && auth.fromDomain === domain;
}
