import type { AttachmentState, MessageRecord } from './message-record.ts';

/**
 * What GET /v1/messages selects. Text filters compare without case and match a substring:
 * `from=acme.example` finds every sender there, and a whole address finds itself. Null: any.
 */
export interface MessageFilter {
  /** Header From or envelope sender (MAIL FROM). */
  from: string | null;
  /** Any envelope recipient. */
  to: string | null;
  /** A workspace the message went to (exact identifier). */
  workspace: string | null;
  /** Any attachment in this state. */
  state: AttachmentState | null;
  /** Subject or any attachment's file name (sent or original). */
  q: string | null;
  /** Received at or after this time, milliseconds since the epoch. */
  since: number | null;
}

export const anyMessage: MessageFilter = {
  from: null,
  to: null,
  workspace: null,
  state: null,
  q: null,
  since: null,
};

export function matchesFilter(record: MessageRecord, filter: MessageFilter): boolean {
  const { attachments } = record;
  if (filter.from !== null && !contains([record.from, record.envelope.mailFrom], filter.from)) return false;
  if (filter.to !== null && !contains(record.envelope.rcptTo, filter.to)) return false;
  if (
    filter.workspace !== null &&
    !attachments.some((attachment) => attachment.workspace === filter.workspace) &&
    !record.workspaces.some((decision) => decision.identifier === filter.workspace)
  ) {
    return false;
  }
  if (filter.state !== null && !attachments.some((attachment) => attachment.state === filter.state)) {
    return false;
  }
  if (filter.q !== null) {
    const texts = [record.subject, ...attachments.flatMap((a) => [a.fileName, a.originalFileName ?? null])];
    if (!contains(texts, filter.q)) return false;
  }
  if (filter.since !== null && !(Date.parse(record.receivedAt) >= filter.since)) return false;
  return true;
}

function contains(values: ReadonlyArray<string | null>, wanted: string): boolean {
  const needle = wanted.toLowerCase();
  return values.some((value) => value?.toLowerCase().includes(needle) ?? false);
}
