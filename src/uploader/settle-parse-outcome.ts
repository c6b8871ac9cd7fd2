import type { GatewayMetrics } from '../metrics.ts';
import type { Document } from '../parsing-api/document-schema.ts';
import type { EventAnnouncer } from '../queue/announce-events.ts';
import type { EntryPatch, MessageLedger } from '../record/message-ledger.ts';
import type { AttachmentEntry, CompletionStatus } from '../record/message-record.ts';
import { documentOutcome } from './record-outcome.ts';

/**
 * Writes a document's parse outcome on its message entry and announces it
 * (`document.parsed` / `document.parse_failed`), whichever way it was learnt: a poll or an
 * event the service pushed. The first outcome wins: an entry whose completion is already
 * `ready` or `failed` is left alone (a repeated event, a poll that raced an event), and its
 * outcome is announced again, which the webhook queue takes only once (same event id).
 */

export interface ParseOutcome {
  state: 'ready' | 'failed';
  /** Why it failed (`errorCode: errorDetail`); null when parsed. */
  reason: string | null;
  /** The Document as the service showed it, when it did. */
  document: Document | null;
  /** Polls made so far (the poller's count; an event leaves the entry's as it is). */
  polls?: number;
  settledBy: 'poll' | 'resthook';
}

export interface SettleDeps {
  ledger: MessageLedger;
  announcer?: EventAnnouncer | undefined;
  metrics?: GatewayMetrics | undefined;
}

export interface SettleTarget {
  messageId: string;
  entry: number;
  workspace: string;
}

export type SettleResult =
  /** Written now. */
  | 'settled'
  /** Another poll or event had settled it already. */
  | 'repeat'
  /** The record is gone. */
  | 'gone';

const settledStates: ReadonlySet<CompletionStatus['state']> = new Set(['ready', 'failed']);

export async function settleParseOutcome(
  deps: SettleDeps,
  target: SettleTarget,
  outcome: ParseOutcome,
): Promise<SettleResult> {
  let wrote = false;
  const entry = await deps.ledger.reviseEntry(target.messageId, target.entry, (current) => {
    if (current.completion && settledStates.has(current.completion.state)) return null;
    wrote = true;
    return outcomePatch(current, outcome);
  });
  if (entry === null) return 'gone';
  if (wrote) deps.metrics?.documents.inc({ outcome: outcome.state === 'ready' ? 'parsed' : 'parse_failed' });
  await announceOutcome(deps, target, entry);
  return wrote ? 'settled' : 'repeat';
}

function outcomePatch(current: AttachmentEntry, outcome: ParseOutcome): EntryPatch {
  const { document } = outcome;
  // Without the Document (an outcome kept for its upload), the state says what it showed.
  const patch: EntryPatch = document
    ? documentOutcome(document)
    : { ready: outcome.state === 'ready', failed: outcome.state === 'failed' };
  if (document?.warnings && document.warnings.length > 0) patch.warnings = document.warnings;
  // A document whose processing failed is rejected, as it is when the upload answer says so.
  if (outcome.state === 'failed') Object.assign(patch, { state: 'rejected', reason: outcome.reason });
  patch.completion = {
    state: outcome.state,
    polls: outcome.polls ?? current.completion?.polls ?? 0,
    nextPollAt: null,
    reason: outcome.reason,
    settledBy: outcome.settledBy,
  };
  return patch;
}

/** `document.parsed` or `document.parse_failed` for an entry whose completion is settled. */
async function announceOutcome(
  deps: SettleDeps,
  target: SettleTarget,
  entry: AttachmentEntry,
): Promise<void> {
  const state = entry.completion?.state;
  if (!deps.announcer || (state !== 'ready' && state !== 'failed')) return;
  await deps.announcer.announce({
    event: state === 'ready' ? 'document.parsed' : 'document.parse_failed',
    messageId: target.messageId,
    workspace: target.workspace,
    subject: [target.entry],
    payload: { attachment: entry },
  });
}
