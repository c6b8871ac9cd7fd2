import { type MockFault, pdfWithPages } from '@ingest-gateway/mock-parsing-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { deliver, queuedId } from '../../harness/smtp-session.ts';
import type { AttachmentEntry } from '../../src/record/message-record.ts';

/**
 * Completion tracking (workspaces[].trackCompletion): after a `wait: false` upload the
 * gateway polls GET /v3/documents/{identifier} from the `completion` queue and records the
 * parse outcome on the entry. The mock finishes documents at once, so a plain upload is
 * ready at the first poll; pending, failing and missing documents are crafted with faults.
 */

const document = (meta: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  extractor: 'invoice',
  meta: { fileName: 'x.pdf', ready: false, failed: false, readyDt: null, ...meta },
  data: {},
  ...extra,
});

/** The next upload is answered 201 with a pending document of this identifier. */
const pendingUpload = (identifier: string): MockFault => ({ status: 201, body: document({ identifier }) });

/** The next read of this document is answered with `body` (or `status` alone). */
const read = (identifier: string, fault: Omit<MockFault, 'method' | 'path'>): MockFault => ({
  ...fault,
  method: 'GET',
  path: `/v3/documents/${identifier}`,
});

describe('completion tracking', () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startHarness({
      workspaces: [
        {
          identifier: 'ws-track',
          ingestEmail: 'track@ingest.test',
          trackCompletion: { firstDelay: 100, maxDelay: 400 },
        },
        {
          identifier: 'ws-track-snake',
          ingestEmail: 'snake@ingest.test',
          upload: { snake_case: true },
          trackCompletion: { firstDelay: 100 },
        },
        {
          identifier: 'ws-track-short',
          ingestEmail: 'short@ingest.test',
          trackCompletion: { firstDelay: 100, maxDelay: 100, maxPolls: 2 },
        },
        {
          identifier: 'ws-track-wait',
          ingestEmail: 'wait@ingest.test',
          upload: { wait: true },
          trackCompletion: true,
        },
        { identifier: 'ws-plain', ingestEmail: 'plain@ingest.test' },
      ],
    });
  });
  afterAll(async () => harness?.close());

  async function send(label: string, to: string): Promise<string> {
    const message = await composeMessage({
      attachments: [{ filename: `${label}.pdf`, content: uniquePdf(label) }],
    });
    const { data } = await deliver(harness.smtpPort, { to: [to], message });
    const id = queuedId(data);
    expect(await harness.settled(id, 0)).toBe('completed');
    return id;
  }

  /** Sends, waits for the upload and for completion tracking, and returns the entry. */
  async function track(label: string, to = 'track@ingest.test'): Promise<AttachmentEntry | undefined> {
    const id = await send(label, to);
    expect(await harness.completed(id, 0)).toBe('completed');
    return (await harness.record(id)).attachments[0];
  }

  it('records ready and readyDt once the service has parsed the document', async () => {
    const entry = await track('ready');
    const parsed = harness.mock.documents.get(entry?.documentIdentifier ?? '');
    expect(parsed?.meta.ready).toBe(true);
    expect(entry).toMatchObject({
      state: 'uploaded',
      ready: true,
      failed: false,
      readyDt: parsed?.meta.readyDt,
      error: null,
      completion: { state: 'ready', polls: 1, nextPollAt: null, reason: null },
    });
    expect(entry?.readyDt).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it('reads the polled document in snake_case when the workspace asks for it', async () => {
    const entry = await track('snake', 'snake@ingest.test');
    const parsed = harness.mock.documents.get(entry?.documentIdentifier ?? '');
    expect(entry).toMatchObject({
      ready: true,
      readyDt: parsed?.meta.readyDt,
      completion: { state: 'ready' },
    });
    expect(entry?.readyDt).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it('polls a pending document again, through a 503, with growing intervals, until it is ready', async () => {
    harness.mock.enqueueFault(pendingUpload('slow-1'));
    harness.mock.enqueueFault(read('slow-1', { status: 200, body: document({ identifier: 'slow-1' }) }));
    harness.mock.enqueueFault(read('slow-1', { status: 503 }));
    harness.mock.enqueueFault(read('slow-1', { status: 200, body: document({ identifier: 'slow-1' }) }));
    harness.mock.enqueueFault(
      read('slow-1', {
        status: 200,
        body: document(
          { identifier: 'slow-1', ready: true, readyDt: '2025-03-01T10:05:00Z' },
          { warnings: [{ warningCode: 'too_many_pages', warningDetail: 'ten pages' }] },
        ),
      }),
    );
    const entry = await track('slow');
    expect(entry).toMatchObject({
      state: 'uploaded',
      documentIdentifier: 'slow-1',
      ready: true,
      readyDt: '2025-03-01T10:05:00Z',
      warnings: [{ warningCode: 'too_many_pages', warningDetail: 'ten pages' }],
      completion: { state: 'ready', polls: 4 },
    });
    // The delays the poller chose: firstDelay 100 ms doubling, capped at maxDelay 400 ms.
    const delays = harness.logs.lines
      .map((line) => JSON.parse(line) as { msg?: string; documentIdentifier?: string; delayMs?: number })
      .filter((line) => line.msg === 'document not ready yet' && line.documentIdentifier === 'slow-1')
      .map((line) => line.delayMs);
    expect(delays).toEqual([200, 400, 400]);
  });

  it('records a document whose processing failed as rejected, with its error', async () => {
    harness.mock.enqueueFault(pendingUpload('conv-1'));
    harness.mock.enqueueFault(
      read('conv-1', {
        status: 200,
        body: document(
          { identifier: 'conv-1', ready: true, failed: true, readyDt: '2025-03-01T10:01:00Z' },
          { error: { errorCode: 'document_conversion_failed', errorDetail: 'could not convert' } },
        ),
      }),
    );
    const entry = await track('conversion');
    expect(entry).toMatchObject({
      state: 'rejected',
      reason: 'document_conversion_failed: could not convert',
      error: { errorCode: 'document_conversion_failed', errorDetail: 'could not convert' },
      ready: true,
      failed: true,
      readyDt: '2025-03-01T10:01:00Z',
      completion: { state: 'failed', polls: 1, reason: 'document_conversion_failed: could not convert' },
    });
  });

  it('records a document the service does not have (404) and stops', async () => {
    harness.mock.enqueueFault(pendingUpload('gone-1'));
    const entry = await track('gone');
    expect(entry).toMatchObject({
      state: 'uploaded',
      documentIdentifier: 'gone-1',
      completion: { state: 'not-found', polls: 1, nextPollAt: null },
    });
    expect(entry?.completion?.reason).toMatch(/^the service has no such document/);
  });

  it('gives up after maxPolls', async () => {
    harness.mock.enqueueFault(pendingUpload('never-1'));
    harness.mock.enqueueFault(
      read('never-1', { status: 200, body: document({ identifier: 'never-1' }), times: 'always' }),
    );
    try {
      const entry = await track('never', 'short@ingest.test');
      expect(entry).toMatchObject({
        state: 'uploaded',
        ready: false,
        completion: { state: 'gave-up', polls: 2, reason: 'not ready after 2 polls' },
      });
    } finally {
      harness.mock.clearFaults();
    }
  });

  it('does not poll a document the upload answer already shows ready (wait: true)', async () => {
    const id = await send('waited', 'wait@ingest.test');
    const [entry] = (await harness.record(id)).attachments;
    expect(entry).toMatchObject({ state: 'uploaded', ready: true });
    expect(entry?.completion).toBeUndefined();
  });

  it('does not poll for a workspace without trackCompletion', async () => {
    const id = await send('plain', 'plain@ingest.test');
    const [entry] = (await harness.record(id)).attachments;
    expect(entry).toMatchObject({ state: 'uploaded', ready: false });
    expect(entry?.completion).toBeUndefined();
  });
});

/**
 * A workspace whose splitter (on the service) splits a multi-page PDF: the upload is ready
 * before its child documents are, and its parse outcome is known only when every child's is.
 */
describe('completion tracking of a split document', () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startHarness({
      // The parent is ready after 1.5 s, each child 1.5 s later: a poll every 100-200 ms
      // sees the parent ready with every child still pending.
      processingMs: 1500,
      mockWorkspaces: [
        { identifier: 'ws-split', documentSplitter: { identifier: 'split-pages', name: 'Pages' } },
      ],
      workspaces: [
        {
          identifier: 'ws-split',
          ingestEmail: 'split@ingest.test',
          trackCompletion: { firstDelay: 100, maxDelay: 200 },
        },
      ],
    });
  });
  afterAll(async () => harness?.close());

  it('settles the document as parsed only once every child is', async () => {
    const message = await composeMessage({
      attachments: [{ filename: 'bundle.pdf', content: pdfWithPages(3, { label: 'split-bundle' }) }],
    });
    const id = queuedId((await deliver(harness.smtpPort, { to: ['split@ingest.test'], message })).data);
    expect(await harness.settled(id, 0)).toBe('completed');
    expect(await harness.completed(id, 0)).toBe('completed');
    const [entry] = (await harness.record(id)).attachments;
    expect(entry).toMatchObject({ state: 'uploaded', ready: true, completion: { state: 'ready' } });
    const parent = harness.mock.documents.get(String(entry?.documentIdentifier));
    expect(parent?.meta.childDocuments).toHaveLength(3);
    // Settled after the children, not when the parent alone was ready.
    for (const child of parent?.meta.childDocuments ?? []) {
      expect(harness.mock.documents.get(child.identifier)?.meta).toMatchObject({
        ready: true,
        failed: false,
      });
    }
  });
});
