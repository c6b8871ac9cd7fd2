import type { CompletionStatus } from '../record/message-record.ts';
import type { InspectedResponse } from './classify-response.ts';
import { parseRetryAfterMs } from './retry-delay.ts';
import type { CompletionPolicy } from './upload-options-schema.ts';

/**
 * What one poll of GET /v3/documents/{identifier} means for completion tracking, as a pure
 * function of the answer, the polls made and the clock (tested as a table). The poller does
 * the I/O.
 *
 * The answer is read with the upload's retry classification: a Document is final once
 * `meta.ready` (or rejected: its `error`, `meta.failed`); network errors, timeouts, 408, 429
 * and 5xx are transient and polled again, as is 401/403 (the key may be fixed meanwhile;
 * the bounds end it otherwise); 404 means the service no longer has the document; any other
 * 4xx will not change by asking again. Polling stops after `maxPolls` polls or once
 * `maxTime` has passed since the upload, whichever comes first.
 */

export type PollDecision =
  | { action: 'finish'; state: 'ready' | 'failed'; reason: string | null }
  | {
      action: 'stop';
      state: Extract<CompletionStatus['state'], 'not-found' | 'gave-up' | 'error'>;
      reason: string;
    }
  | { action: 'poll-again'; delayMs: number; reason: string | null };

export interface PollInput {
  response: InspectedResponse;
  /** The HTTP status, null when the service was not reached. */
  status: number | null;
  /** Retry-After of the answer, if any. */
  retryAfter: string | undefined;
  /** Polls made, this one included. */
  polls: number;
  /** Epoch milliseconds of the upload: `maxTime` counts from it. */
  startedAt: number;
  /** Epoch milliseconds now. */
  now: number;
  policy: CompletionPolicy;
}

/** Milliseconds before the poll that follows `polls` polls: firstDelay doubling, capped at maxDelay. */
export function pollDelayMs(polls: number, policy: CompletionPolicy): number {
  // 2^40 × 100 ms is far past any cap; bounding the exponent keeps the arithmetic finite.
  const exponent = Math.min(Math.max(0, Math.floor(polls)), 40);
  return Math.min(policy.maxDelay, policy.firstDelay * 2 ** exponent);
}

export function decidePoll(input: PollInput): PollDecision {
  const { verdict, document } = input.response;
  switch (verdict.outcome) {
    case 'rejected':
      return { action: 'finish', state: 'failed', reason: `${verdict.errorCode}: ${verdict.errorDetail}` };
    case 'uploaded':
      if (document?.meta.ready === true) return { action: 'finish', state: 'ready', reason: null };
      return again(input, null);
    case 'retry':
      return again(input, verdict.reason);
    case 'unauthorized':
      return again(input, `the service refused the API key (HTTP ${verdict.status}): ${verdict.detail}`);
    case 'failed':
      if (input.status === 404) {
        return {
          action: 'stop',
          state: 'not-found',
          reason: `the service has no such document (${verdict.detail})`,
        };
      }
      return { action: 'stop', state: 'error', reason: `${verdict.reason}: ${verdict.detail}` };
  }
}

function again(input: PollInput, reason: string | null): PollDecision {
  const { policy, polls, now, startedAt } = input;
  const deadline = startedAt + policy.maxTime;
  const notReady = reason === null ? 'not ready' : `not ready (last poll: ${reason})`;
  if (polls >= policy.maxPolls) {
    return { action: 'stop', state: 'gave-up', reason: `${notReady} after ${polls} polls` };
  }
  if (now >= deadline) {
    return {
      action: 'stop',
      state: 'gave-up',
      reason: `${notReady} ${formatDuration(policy.maxTime)} after the upload`,
    };
  }
  const serverDelay = parseRetryAfterMs(input.retryAfter, now) ?? 0;
  const wanted = Math.max(pollDelayMs(polls, policy), serverDelay);
  // The last poll comes at the deadline rather than after it.
  return { action: 'poll-again', delayMs: Math.min(wanted, deadline - now), reason };
}

function formatDuration(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  return `${ms / 1000} s`;
}

/**
 * The outcome of a split document from its children's, read in turn: the first child not
 * settled decides the next poll (or the end of polling); once every child is settled, the
 * document is parsed when each child is, and failed, naming the children that failed, when not.
 */
export async function childrenDecision(
  children: readonly { identifier?: string | null | undefined }[],
  decideChild: (identifier: string) => Promise<PollDecision>,
): Promise<PollDecision> {
  const failed: string[] = [];
  for (const { identifier } of children) {
    if (!identifier) continue;
    const decision = await decideChild(identifier);
    if (decision.action === 'poll-again') {
      return { ...decision, reason: decision.reason ?? `child document ${identifier} not parsed yet` };
    }
    if (decision.action === 'stop')
      return { ...decision, reason: `child document ${identifier}: ${decision.reason}` };
    if (decision.state === 'failed') failed.push(`${identifier} (${decision.reason ?? 'failed'})`);
  }
  return failed.length === 0
    ? { action: 'finish', state: 'ready', reason: null }
    : { action: 'finish', state: 'failed', reason: `child documents failed: ${failed.join(', ')}` };
}
