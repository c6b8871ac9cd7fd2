import type { ApiResult } from '../parsing-api/api-result.ts';
import type { DocumentListing } from '../parsing-api/document-list.ts';
import type { AttachmentEntry } from '../record/message-record.ts';
import { isTimeoutReason } from './classify-response.ts';
import { findEarlierUpload } from './find-earlier-upload.ts';
import { identifiesOneUpload } from './upload-identity.ts';
import type { UploadWorkspace } from './upload-settings-schema.ts';

/**
 * What an upload attempt does next, as one pure function of what the worker read: the job's
 * counts, the entry in the message record, the workspace as configured now, whether the bytes
 * are still stored and, once it was made, the answer to the lookup of an earlier upload.
 * The worker performs the step it names and, after a lookup, asks again with its answer.
 *
 * Exactly once rests on two rules decided here: a settled entry is never uploaded again, and
 * an attempt after the first never uploads before the service said no earlier attempt created
 * the document (when the workspace's customIdentifier names one upload).
 */

export interface AttemptFacts {
  /** This attempt, from 1: the attempts BullMQ counted as made, plus one. */
  attempt: number;
  /** `upload.attempts` (or the job's own): a transient failure at this attempt gives up. */
  maxAttempts: number;
  /** Runs BullMQ started for this job, this one included; a run its worker died in counts. */
  runsStarted: number;
  /** The entry as this run found it, before marking it uploading; null when the record is gone. */
  entry: AttachmentEntry | null;
  /** The job's workspace identifier. */
  workspaceName: string;
  /** That workspace as configured now; undefined when a reload removed it. */
  workspace: UploadWorkspace | undefined;
  /** The attachment's stored bytes; null when they are gone. */
  blob: Buffer | null;
  /** The lookup by customIdentifier, once the worker made it (after a `look-up` step). */
  lookup?: {
    customIdentifier: string;
    answer: DocumentListing;
    /** When the answer came, ms since the epoch: whether an earlier request may still complete. */
    answeredAt: number;
  };
  /**
   * `api.timeout`, ms. After an attempt that timed out, the service is given as long again to
   * complete it before a lookup that finds nothing is trusted; absent, it is trusted at once.
   */
  requestTimeoutMs?: number | undefined;
}

export type NextStep =
  /** Settled by an earlier run that died before BullMQ heard of it: redo the steps after settling. */
  | { step: 'skip'; entry: SettledEntry }
  /** Ask the service for the document an earlier attempt may have created, then ask again. */
  | { step: 'look-up'; workspace: UploadWorkspace }
  | { step: 'upload'; workspace: UploadWorkspace; file: Buffer }
  /** An earlier attempt created the document: its answer stands for this attempt's. */
  | { step: 'adopt'; documentIdentifier: string; answer: ApiResult }
  /** The lookup was refused the API key: settled like an upload refused it (a pause). */
  | { step: 'key-refused'; answer: ApiResult }
  /** No reliable answer whether the document exists: uploading blindly could duplicate it. */
  | { step: 'retry-later'; reason: string; retryAfter: string | undefined }
  | { step: 'fail'; reason: string };

/** An entry the service's answer settled: the document exists, uploaded or rejected. */
export type SettledEntry = AttachmentEntry & { state: 'uploaded' | 'rejected'; documentIdentifier: string };

export function isSettled(entry: AttachmentEntry | null): entry is SettledEntry {
  return (
    entry !== null &&
    Boolean(entry.documentIdentifier) &&
    (entry.state === 'uploaded' || entry.state === 'rejected')
  );
}

export function nextStep(facts: AttemptFacts): NextStep {
  if (isSettled(facts.entry)) return { step: 'skip', entry: facts.entry };
  const { workspace } = facts;
  if (!workspace) return { step: 'fail', reason: `workspace ${facts.workspaceName} is no longer configured` };
  const file = facts.blob;
  if (!file) return { step: 'fail', reason: 'the stored attachment is gone' };
  if (facts.lookup) return afterLookup(facts, facts.lookup, { step: 'upload', workspace, file });
  if (triedBefore(facts) && identifiesOneUpload(workspace)) return { step: 'look-up', workspace };
  return { step: 'upload', workspace, file };
}

/**
 * BullMQ's count says whether this job ran before; the entry's says whether the upload did,
 * which `failed retry` (it resets the job's counts) must not hide.
 */
function triedBefore(facts: AttemptFacts): boolean {
  return facts.runsStarted > 1 || (facts.entry?.attempts ?? 0) > 0;
}

function afterLookup(
  facts: AttemptFacts,
  { customIdentifier, answer, answeredAt }: NonNullable<AttemptFacts['lookup']>,
  upload: NextStep & { step: 'upload' },
): NextStep {
  // The listing stops at a failed page, so the last answer is the one that can refuse the key.
  const { last } = answer;
  // A refused key is refused for the lookup as for the upload: the same pause, not a retry.
  if (last.kind === 'response' && (last.status === 401 || last.status === 403)) {
    return { step: 'key-refused', answer: last };
  }
  const earlier = findEarlierUpload(answer, customIdentifier, upload.workspace.identifier);
  if ('unknown' in earlier) {
    const retryAfter = last.kind === 'response' ? last.headers['retry-after'] : undefined;
    return noAnswerYet(facts, earlier.unknown, retryAfter);
  }
  if (earlier.found === null) {
    const waitMs = stillCompletingMs(facts, answeredAt);
    if (waitMs <= 0) return upload;
    const reason =
      'the earlier attempt timed out and the service may still create its document: ' +
      `not trusting a lookup that finds none for ${Math.ceil(waitMs / 1000)} s more`;
    return noAnswerYet(facts, reason, String(Math.ceil(waitMs / 1000)));
  }
  return {
    step: 'adopt',
    documentIdentifier: earlier.found.meta.identifier,
    answer: { kind: 'response', status: 200, headers: {}, body: earlier.found },
  };
}

/** No reliable answer whether the document exists: ask again later, or give up at the last attempt. */
function noAnswerYet(facts: AttemptFacts, reason: string, retryAfter: string | undefined): NextStep {
  if (facts.attempt >= facts.maxAttempts) {
    return { step: 'fail', reason: `gave up after ${facts.attempt} attempts: ${reason}` };
  }
  return { step: 'retry-later', reason, retryAfter };
}

/**
 * How much longer a lookup that finds nothing is not proof, in ms (0 or less: it is). A request
 * that timed out reached a service slower than the client: it may create the document after
 * the client gave up (README, the windows that remain). The entry was updated when the
 * timeout was recorded, so the service gets `api.timeout` again from then.
 */
function stillCompletingMs(facts: AttemptFacts, answeredAt: number): number {
  const { entry, requestTimeoutMs } = facts;
  if (requestTimeoutMs === undefined || entry === null || entry.state !== 'queued') return 0;
  if (!isTimeoutReason(entry.reason)) return 0;
  const recordedAt = Date.parse(entry.updatedAt);
  if (Number.isNaN(recordedAt)) return 0;
  return recordedAt + requestTimeoutMs - answeredAt;
}
