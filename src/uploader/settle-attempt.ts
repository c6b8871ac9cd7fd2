import type { ApiResult } from '../parsing-api/api-result.ts';
import type { Document } from '../parsing-api/document-schema.ts';
import type { AttachmentEntry } from '../record/message-record.ts';
import { type Classification, inspectResponse } from './classify-response.ts';
import type { SettledEntry } from './next-step.ts';
import { documentOutcome, requestErrorOf } from './record-outcome.ts';

/**
 * How an upload attempt ends, as pure functions: what the message record's entry becomes,
 * which follow-up actions the worker performs, in which order, and what the job itself does
 * (done, retried, failed, or handed back to the queue). The worker performs the actions one by
 * one and translates the ending for BullMQ.
 *
 * The order is what makes a crash harmless: the document index first, the entry second, the
 * blob's release last, so a run cut short after any action is re-run, finds a settled entry
 * and redoes the actions after it (finishSettled). Every action is idempotent (the entry
 * change replaces fields, the blob's release and the completion job are keyed), so the worker
 * may repeat one that failed without changing what the record says.
 */

/** Fields of one entry to replace; the ledger stamps `updatedAt`. */
export type SettledState = SettledEntry['state'];

export type EntryChange = Partial<Omit<AttachmentEntry, 'entry' | 'updatedAt'>>;

export type FollowUp =
  /** Where the document came from: `GET /v1/documents/{identifier}`. Idempotent. */
  | { action: 'index-document'; documentIdentifier: string }
  | { action: 'update-entry'; change: EntryChange }
  /** Drop this entry's claim on the stored bytes (deleted with the last claim). Idempotent. */
  | { action: 'release-blob' }
  /** Poll for the parse outcome, when the workspace tracks completion. */
  | { action: 'track-completion'; documentIdentifier: string; document: Document | null }
  /** Stop taking jobs until the key is corrected: it is wrong for every job, not just this one. */
  | { action: 'pause-uploads'; reason: string };

export type Ending =
  /** Settled: the document exists; `state` and `reason` are what the entry says of it. */
  | { end: 'done'; documentIdentifier: string; state: SettledState; reason: string | null }
  /** Another attempt after the retry policy's delay, which honours the service's Retry-After. */
  | { end: 'retry'; reason: string; retryAfter: string | undefined }
  /** Failed for good: no further attempt. */
  | { end: 'fail'; reason: string; requestError?: AttachmentEntry['requestError'] }
  /** Back to the wait list untouched, no attempt spent: the backlog waits for a corrected key. */
  | { end: 'hand-back'; reason: string; status: number };

export interface Settlement {
  /** The classification of the service's answer, for the uploads metric; absent without one. */
  outcome?: Classification['outcome'];
  /** Performed in this order. */
  actions: FollowUp[];
  ending: Ending;
}

export interface AnswerFacts {
  /** The attempt the answer belongs to, from 1. */
  attempt: number;
  maxAttempts: number;
  /** The upload's answer, or a lookup's standing for it (the earlier document, a refused key). */
  answer: ApiResult;
  /** A reload replaced the API key while this attempt's requests were in flight. */
  keyReplaced: boolean;
}

/** The API's answer to an attempt, as classified by the retry policy (classify-response.ts). */
export function settleAnswer(facts: AnswerFacts): Settlement {
  const { attempt, maxAttempts } = facts;
  const { verdict, document } = inspectResponse({ result: facts.answer, attempt, maxAttempts });
  const outcome = verdict.outcome;
  switch (verdict.outcome) {
    case 'uploaded':
    case 'rejected':
      return { outcome, ...settleDocument(verdict, document, attempt) };
    case 'retry':
      return { outcome, ...retryLater(verdict.reason, verdict.retryAfter, attempt) };
    case 'failed': {
      const reason =
        verdict.detail === verdict.reason ? verdict.reason : `${verdict.reason}: ${verdict.detail}`;
      return { outcome, ...failure(reason, attempt, requestErrorOf(verdict)) };
    }
    case 'unauthorized':
      return { outcome, ...keyRefused(verdict, facts) };
  }
}

type DocumentVerdict = Extract<Classification, { outcome: 'uploaded' | 'rejected' }>;

function settleDocument(verdict: DocumentVerdict, document: Document | null, attempt: number): Settlement {
  const { documentIdentifier } = verdict;
  const reason = verdict.outcome === 'rejected' ? `${verdict.errorCode}: ${verdict.errorDetail}` : null;
  const change: EntryChange = {
    state: verdict.outcome,
    reason,
    documentIdentifier,
    warnings: verdict.warnings,
    attempts: attempt,
    // ready/failed/readyDt (final with wait: true) and the rejection's error.
    ...(document ? documentOutcome(document) : {}),
  };
  const actions: FollowUp[] = [
    { action: 'index-document', documentIdentifier },
    { action: 'update-entry', change },
    { action: 'release-blob' },
  ];
  if (verdict.outcome === 'uploaded')
    actions.push({ action: 'track-completion', documentIdentifier, document });
  return { actions, ending: { end: 'done', documentIdentifier, state: verdict.outcome, reason } };
}

function keyRefused(
  verdict: Extract<Classification, { outcome: 'unauthorized' }>,
  facts: AnswerFacts,
): Settlement {
  // Refused a key that a reload has replaced since: not a reason to stop again.
  if (facts.keyReplaced) {
    const reason = 'the API key was replaced while this request was in flight';
    if (facts.attempt >= facts.maxAttempts) {
      return failure(`gave up after ${facts.attempt} attempts: ${reason}`, facts.attempt);
    }
    return retryLater(reason, undefined, facts.attempt);
  }
  // The entry says why it waits; a reload with a corrected key (SIGHUP) resumes the workers.
  const reason = `the parsing service refused the API key (HTTP ${verdict.status}): ${verdict.detail}`;
  return {
    actions: [
      { action: 'pause-uploads', reason },
      { action: 'update-entry', change: { state: 'queued', reason } },
    ],
    ending: { end: 'hand-back', reason, status: verdict.status },
  };
}

/** A transient failure: the entry waits in the queue, saying why. */
export function retryLater(reason: string, retryAfter: string | undefined, attempt: number): Settlement {
  return {
    actions: [{ action: 'update-entry', change: { state: 'queued', reason, attempts: attempt } }],
    ending: { end: 'retry', reason, retryAfter },
  };
}

/** A permanent failure, recorded on the entry with the service's RequestError when it sent one. */
export function failure(
  reason: string,
  attempt: number,
  detail: Pick<AttachmentEntry, 'requestError'> | Record<string, never> = {},
): Settlement {
  return {
    actions: [{ action: 'update-entry', change: { ...detail, state: 'failed', reason, attempts: attempt } }],
    ending: { end: 'fail', reason, ...detail },
  };
}

/**
 * A run found its entry settled by an earlier run that died before BullMQ completed the job:
 * the actions after settling, each idempotent, and nothing sent to the service.
 */
export function finishSettled(entry: SettledEntry): Settlement {
  const { documentIdentifier } = entry;
  const actions: FollowUp[] = [{ action: 'index-document', documentIdentifier }, { action: 'release-blob' }];
  // Tracking never started, or marked polling by a run that died before adding its job
  // (adding it again is a no-op: the job id is stable); a ready document needs none.
  const trackingPending = !entry.completion || entry.completion.state === 'polling';
  if (entry.state === 'uploaded' && trackingPending && entry.ready !== true) {
    actions.push({ action: 'track-completion', documentIdentifier, document: null });
  }
  return { actions, ending: { end: 'done', documentIdentifier, state: entry.state, reason: entry.reason } };
}
