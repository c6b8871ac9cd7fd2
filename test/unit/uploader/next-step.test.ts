import { describe, expect, it } from 'vitest';
import type { ApiResult } from '../../../src/parsing-api/api-result.ts';
import type { AttachmentEntry } from '../../../src/record/message-record.ts';
import {
  type AttemptFacts,
  isSettled,
  type NextStep,
  nextStep,
  type SettledEntry,
} from '../../../src/uploader/next-step.ts';
import type { UploadWorkspace } from '../../../src/uploader/upload-settings-schema.ts';

const workspace: UploadWorkspace = { identifier: 'ws-1' };
/** A template that could name another message's document: no lookup (at least once). */
const looseWorkspace: UploadWorkspace = { identifier: 'ws-1', upload: { customIdentifier: '{messageId}' } };
const file = Buffer.from('%PDF-1.7 bytes');

const entry = (patch: Partial<AttachmentEntry> = {}): AttachmentEntry => ({
  entry: 0,
  part: 1,
  fileName: 'invoice.pdf',
  contentType: 'application/pdf',
  detectedType: 'application/pdf',
  size: file.length,
  sha256: 'ab'.repeat(32),
  workspace: 'ws-1',
  state: 'queued',
  reason: null,
  documentIdentifier: null,
  attempts: 0,
  warnings: [],
  updatedAt: '2025-03-01T10:00:00.000Z',
  ...patch,
});

const facts = (patch: Partial<AttemptFacts> = {}): AttemptFacts => ({
  attempt: 1,
  maxAttempts: 3,
  runsStarted: 1,
  entry: entry(),
  workspaceName: 'ws-1',
  workspace,
  blob: file,
  ...patch,
});

const response = (status: number, body?: unknown, headers: Record<string, string> = {}): ApiResult => ({
  kind: 'response',
  status,
  headers,
  body,
});
const earlierDocument = (owner = 'ws-1') => ({
  meta: { identifier: 'DOC-1', customIdentifier: 'Q1-0', workspace: { identifier: owner } },
});
/** A lookup answered in one page, or in several: `followed` are the pages before the last. */
const lookup = (
  last: ApiResult,
  followed: ApiResult[] = [],
  answeredAt = Date.parse('2025-03-01T10:05:00Z'),
) => ({
  customIdentifier: 'Q1-0',
  answer: { followed, last },
  answeredAt,
});
/** A retry: BullMQ counted one attempt made and starts a second run. */
const retry = { attempt: 2, runsStarted: 2, entry: entry({ attempts: 1, state: 'queued' }) };

describe('nextStep before any lookup', () => {
  const uploaded: SettledEntry = {
    ...entry({ attempts: 1 }),
    state: 'uploaded',
    documentIdentifier: 'DOC-1',
  };
  const rejected: SettledEntry = { ...uploaded, state: 'rejected', reason: 'duplicate: of DOC-0' };
  it.each<{ name: string; facts: AttemptFacts; expected: NextStep }>([
    {
      name: 'an entry an earlier run uploaded is skipped',
      facts: facts({ ...retry, entry: uploaded }),
      expected: { step: 'skip', entry: uploaded },
    },
    {
      name: 'an entry an earlier run saw rejected is skipped',
      facts: facts({ ...retry, entry: rejected }),
      expected: { step: 'skip', entry: rejected },
    },
    {
      name: 'a settled entry is skipped even when its bytes and workspace are gone',
      facts: facts({ entry: uploaded, blob: null, workspace: undefined }),
      expected: { step: 'skip', entry: uploaded },
    },
    {
      name: 'uploaded without a document identifier is not settled: uploaded',
      facts: facts({ entry: entry({ state: 'uploaded' }) }),
      expected: { step: 'upload', workspace, file },
    },
    {
      name: 'a workspace a reload removed fails',
      facts: facts({ workspace: undefined, workspaceName: 'ws-gone' }),
      expected: { step: 'fail', reason: 'workspace ws-gone is no longer configured' },
    },
    {
      name: 'bytes that are gone fail',
      facts: facts({ blob: null }),
      expected: { step: 'fail', reason: 'the stored attachment is gone' },
    },
    {
      name: 'the first attempt uploads without asking',
      facts: facts(),
      expected: { step: 'upload', workspace, file },
    },
    {
      name: 'the first attempt of a message whose record is gone uploads with what the job knows',
      facts: facts({ entry: null }),
      expected: { step: 'upload', workspace, file },
    },
    {
      name: 'a retry looks up first',
      facts: facts(retry),
      expected: { step: 'look-up', workspace },
    },
    {
      name: 'a run after a worker died mid-attempt (no attempt counted) looks up first',
      facts: facts({ runsStarted: 2, entry: entry({ state: 'uploading', attempts: 1 }) }),
      expected: { step: 'look-up', workspace },
    },
    {
      name: 'a second run of a message whose record is gone looks up: BullMQ counted the first',
      facts: facts({ attempt: 2, runsStarted: 2, entry: null }),
      expected: { step: 'look-up', workspace },
    },
    {
      name: 'a job `failed retry` reset still looks up: the entry remembers its attempts',
      facts: facts({ attempt: 1, runsStarted: 1, entry: entry({ state: 'failed', attempts: 3 }) }),
      expected: { step: 'look-up', workspace },
    },
    {
      name: 'a retry in a workspace whose template cannot name one upload uploads again',
      facts: facts({ ...retry, workspace: looseWorkspace }),
      expected: { step: 'upload', workspace: looseWorkspace, file },
    },
  ])('$name', ({ facts, expected }) => {
    expect(nextStep(facts)).toEqual(expected);
  });
});

describe('nextStep after the lookup of an earlier upload', () => {
  it.each<{ name: string; facts: AttemptFacts; expected: NextStep }>([
    {
      name: 'the earlier document, in a page of results, is adopted',
      facts: facts({ ...retry, lookup: lookup(response(200, { results: [earlierDocument()] })) }),
      expected: {
        step: 'adopt',
        documentIdentifier: 'DOC-1',
        answer: response(200, earlierDocument()),
      },
    },
    {
      name: 'the earlier document, in a bare list, is adopted',
      facts: facts({ ...retry, lookup: lookup(response(200, [earlierDocument()])) }),
      expected: {
        step: 'adopt',
        documentIdentifier: 'DOC-1',
        answer: response(200, earlierDocument()),
      },
    },
    {
      name: 'the earlier document, listed as a bare Meta, is adopted as a Document',
      facts: facts({ ...retry, lookup: lookup(response(200, { results: [earlierDocument().meta] })) }),
      expected: {
        step: 'adopt',
        documentIdentifier: 'DOC-1',
        answer: response(200, earlierDocument()),
      },
    },
    {
      name: 'the earlier document on a first page is adopted whatever the next page answered',
      facts: facts({
        ...retry,
        lookup: lookup(response(503), [
          response(200, { count: 2, next: '?page=2', results: [earlierDocument()] }),
        ]),
      }),
      expected: {
        step: 'adopt',
        documentIdentifier: 'DOC-1',
        answer: response(200, earlierDocument()),
      },
    },
    {
      name: 'a list with an item it cannot read is no answer: retry later, never upload blind',
      facts: facts({ ...retry, lookup: lookup(response(200, { count: 1, results: [{ id: 7 }] })) }),
      expected: {
        step: 'retry-later',
        reason: 'document lookup listed an item neither a Document nor a Meta (unreadable at identifier)',
        retryAfter: undefined,
      },
    },
    {
      name: 'a next page that failed retries later, honouring its Retry-After',
      facts: facts({
        ...retry,
        lookup: lookup(response(429, undefined, { 'retry-after': '7' }), [
          response(200, { count: 2, next: '?page=2', results: [earlierDocument('ws-2')] }),
        ]),
      }),
      expected: { step: 'retry-later', reason: 'document lookup answered HTTP 429', retryAfter: '7' },
    },
    {
      name: 'no earlier document: upload',
      facts: facts({ ...retry, lookup: lookup(response(200, { results: [] })) }),
      expected: { step: 'upload', workspace, file },
    },
    {
      name: "another workspace's document with the same identifier is not this upload's",
      facts: facts({ ...retry, lookup: lookup(response(200, { results: [earlierDocument('ws-2')] })) }),
      expected: { step: 'upload', workspace, file },
    },
    {
      name: 'a refused key (401) is settled like a refused upload',
      facts: facts({ ...retry, lookup: lookup(response(401, { detail: 'no' })) }),
      expected: { step: 'key-refused', answer: response(401, { detail: 'no' }) },
    },
    {
      name: 'a forbidden key (403) is settled like a refused upload',
      facts: facts({ ...retry, lookup: lookup(response(403)) }),
      expected: { step: 'key-refused', answer: response(403) },
    },
    {
      name: 'a lookup answered 503 retries later, honouring its Retry-After',
      facts: facts({ ...retry, lookup: lookup(response(503, 'busy', { 'retry-after': '120' })) }),
      expected: { step: 'retry-later', reason: 'document lookup answered HTTP 503', retryAfter: '120' },
    },
    {
      name: 'a lookup lost to the network retries later',
      facts: facts({
        ...retry,
        lookup: lookup({ kind: 'network', error: { code: 'ECONNRESET', message: 'socket hang up' } }),
      }),
      expected: {
        step: 'retry-later',
        reason: 'document lookup failed: socket hang up',
        retryAfter: undefined,
      },
    },
    {
      name: 'a 2xx that is not a list is no answer: retry later, never upload blind',
      facts: facts({ ...retry, lookup: lookup(response(200, 'OK')) }),
      expected: {
        step: 'retry-later',
        reason: 'document lookup answered something other than a list',
        retryAfter: undefined,
      },
    },
    {
      name: 'no answer at the last attempt gives up',
      facts: facts({ ...retry, attempt: 3, lookup: lookup(response(503, 'busy', { 'retry-after': '120' })) }),
      expected: { step: 'fail', reason: 'gave up after 3 attempts: document lookup answered HTTP 503' },
    },
    {
      name: 'the lookup does not override a workspace a reload removed meanwhile',
      facts: facts({ ...retry, workspace: undefined, lookup: lookup(response(200, [earlierDocument()])) }),
      expected: { step: 'fail', reason: 'workspace ws-1 is no longer configured' },
    },
  ])('$name', ({ facts, expected }) => {
    expect(nextStep(facts)).toEqual(expected);
  });
});

describe('nextStep after the lookup that follows a timed-out attempt', () => {
  /** The timeout was recorded at 10:00:00; api.timeout is a minute. */
  const timedOut = {
    ...retry,
    requestTimeoutMs: 60_000,
    entry: entry({ attempts: 1, state: 'queued', reason: 'timed out: no complete response within 60000 ms' }),
  };
  const at = (time: string) => Date.parse(`2025-03-01T${time}Z`);
  const none = response(200, { count: 0, results: [] });
  it.each<{ name: string; facts: AttemptFacts; expected: NextStep }>([
    {
      name: 'finding nothing 20 s later is not trusted yet: the service may still create it',
      facts: facts({ ...timedOut, lookup: lookup(none, [], at('10:00:20')) }),
      expected: {
        step: 'retry-later',
        reason:
          'the earlier attempt timed out and the service may still create its document: ' +
          'not trusting a lookup that finds none for 40 s more',
        retryAfter: '40',
      },
    },
    {
      name: 'finding nothing a timeout later is trusted',
      facts: facts({ ...timedOut, lookup: lookup(none, [], at('10:01:00')) }),
      expected: { step: 'upload', workspace, file },
    },
    {
      name: 'finding the document is trusted at once',
      facts: facts({ ...timedOut, lookup: lookup(response(200, [earlierDocument()]), [], at('10:00:01')) }),
      expected: { step: 'adopt', documentIdentifier: 'DOC-1', answer: response(200, earlierDocument()) },
    },
    {
      name: 'an attempt the service answered (503) leaves nothing in progress: nothing found is trusted',
      facts: facts({
        ...timedOut,
        entry: entry({ attempts: 1, state: 'queued', reason: 'HTTP 503 Service Unavailable' }),
        lookup: lookup(none, [], at('10:00:01')),
      }),
      expected: { step: 'upload', workspace, file },
    },
    {
      name: 'without api.timeout given, nothing found is trusted at once',
      facts: facts({ ...timedOut, requestTimeoutMs: undefined, lookup: lookup(none, [], at('10:00:01')) }),
      expected: { step: 'upload', workspace, file },
    },
    {
      name: 'still too early at the last attempt gives up rather than upload blind',
      facts: facts({ ...timedOut, attempt: 3, lookup: lookup(none, [], at('10:00:30')) }),
      expected: {
        step: 'fail',
        reason:
          'gave up after 3 attempts: the earlier attempt timed out and the service may still ' +
          'create its document: not trusting a lookup that finds none for 30 s more',
      },
    },
  ])('$name', ({ facts, expected }) => {
    expect(nextStep(facts)).toEqual(expected);
  });
});

describe('isSettled', () => {
  it.each<[string, AttachmentEntry | null, boolean]>([
    ['uploaded with a document', entry({ state: 'uploaded', documentIdentifier: 'D' }), true],
    ['rejected with a document', entry({ state: 'rejected', documentIdentifier: 'D' }), true],
    ['failed, even naming a document', entry({ state: 'failed', documentIdentifier: 'D' }), false],
    ['uploading', entry({ state: 'uploading', attempts: 1 }), false],
    ['queued', entry(), false],
    ['no record', null, false],
  ])('%s → %s', (_name, value, expected) => {
    expect(isSettled(value)).toBe(expected);
  });
});
