import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { deliver, queuedId } from '../../harness/smtp-session.ts';

/** How the worker treats each kind of answer from the parsing API (docs/parsing-api.md). */
describe('upload outcomes', () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startHarness({
      upload: { attempts: 3 },
      workspaces: [
        { identifier: 'ws-open', ingestEmail: 'documents@ingest.test' },
        {
          identifier: 'ws-wait',
          ingestEmail: 'parsed@ingest.test',
          upload: { wait: true, rejectDuplicates: true },
        },
      ],
    });
  });
  afterAll(async () => harness?.close());

  async function send(
    label: string,
    to = 'documents@ingest.test',
    content = uniquePdf(label),
  ): Promise<string> {
    const message = await composeMessage({ attachments: [{ filename: `${label}.pdf`, content }] });
    const { data } = await deliver(harness.smtpPort, { to: [to], message });
    return queuedId(data);
  }

  it('retries a 503 and records one document after the second attempt', async () => {
    harness.mock.enqueueFault({ status: 503 });
    const id = await send('after-503');
    expect(await harness.settled(id, 0)).toBe('completed');
    const [entry] = (await harness.record(id)).attachments;
    expect(entry).toMatchObject({ state: 'uploaded', attempts: 2 });
    const uploads = harness.mock.uploads.filter((upload) => upload.file?.fileName === 'after-503.pdf');
    expect(uploads.map((upload) => upload.documentIdentifier)).toEqual([entry?.documentIdentifier]);
  });

  it('retries a dropped connection and a 429', async () => {
    harness.mock.enqueueFault({ drop: true });
    harness.mock.enqueueFault({ status: 429, headers: { 'retry-after': '0' } });
    const id = await send('after-drop');
    expect(await harness.settled(id, 0)).toBe('completed');
    expect((await harness.record(id)).attachments[0]).toMatchObject({ state: 'uploaded', attempts: 3 });
  });

  it('gives up after upload.attempts transient failures, with the last cause', async () => {
    for (let i = 0; i < 3; i++) harness.mock.enqueueFault({ status: 502 });
    const id = await send('always-502');
    expect(await harness.settled(id, 0)).toBe('failed');
    const [entry] = (await harness.record(id)).attachments;
    expect(entry?.state).toBe('failed');
    expect(entry?.reason).toMatch(/^gave up after 3 attempts: HTTP 502/);
  });

  it('marks a 400 failed with the service detail and makes no further attempt', async () => {
    harness.mock.enqueueFault({
      status: 400,
      body: {
        type: 'validation_error',
        errors: [{ attr: 'file', code: 'invalid', detail: 'The file is damaged.' }],
      },
    });
    const before = harness.mock.uploads.length;
    const id = await send('bad-request');
    expect(await harness.settled(id, 0)).toBe('failed');
    const [entry] = (await harness.record(id)).attachments;
    expect(entry).toMatchObject({ state: 'failed', attempts: 1 });
    expect(entry?.reason).toContain('file: invalid: The file is damaged.');
    expect(harness.mock.uploads.length).toBe(before);
  });

  // With wait=false the service answers before parsing, so only wait=true shows the rejection.
  it('records a document the service rejects (a duplicate) as rejected, not retried', async () => {
    const content = uniquePdf('duplicate');
    const first = await send('dup-first', 'parsed@ingest.test', content);
    expect(await harness.settled(first, 0)).toBe('completed');
    const second = await send('dup-second', 'parsed@ingest.test', content);
    expect(await harness.settled(second, 0)).toBe('completed');
    const [entry] = (await harness.record(second)).attachments;
    expect(entry).toMatchObject({ state: 'rejected', attempts: 1 });
    expect(entry?.reason).toMatch(/^duplicate_document: /);
    expect(entry?.documentIdentifier).toBeTruthy();
  });
});
