import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { deliver, queuedId } from '../../harness/smtp-session.ts';

/**
 * An upload that reached the service although its answer was lost (the connection dropped
 * after the request was read, as when a worker dies mid-upload) is not uploaded again: the
 * retry finds the document by its customIdentifier.
 */
describe('exactly once across a lost answer', () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startHarness({
      upload: { attempts: 5 },
      workspaces: [
        { identifier: 'ws-open', ingestEmail: 'documents@ingest.test' },
        {
          identifier: 'ws-loose',
          ingestEmail: 'loose@ingest.test',
          upload: { customIdentifier: '{messageId}' },
        },
      ],
    });
  });
  afterAll(async () => harness?.close());

  async function send(label: string, to: string): Promise<string> {
    const message = await composeMessage({
      attachments: [{ filename: `${label}.pdf`, content: uniquePdf(label) }],
    });
    return queuedId((await deliver(harness.smtpPort, { to: [to], message })).data);
  }
  const uploadsOf = (fileName: string) =>
    harness.mock.uploads.filter((upload) => upload.file?.fileName === fileName);

  it('records the document the lost attempt created, and uploads it once', async () => {
    harness.mock.enqueueFault({ drop: 'after' });
    const id = await send('lost-answer', 'documents@ingest.test');
    expect(await harness.settled(id, 0)).toBe('completed');
    const uploads = uploadsOf('lost-answer.pdf');
    expect(uploads).toHaveLength(1);
    expect(uploads[0]?.fields.customIdentifier).toEqual([`${id}-0`]);
    const [entry] = (await harness.record(id)).attachments;
    expect(entry).toMatchObject({
      state: 'uploaded',
      documentIdentifier: uploads[0]?.documentIdentifier,
      attempts: 2,
    });
    expect(
      harness.logs.lines.some((line) => line.includes('an earlier attempt created the document already')),
    ).toBe(true);
  });

  it('does not upload blindly while the lookup itself fails', async () => {
    harness.mock.enqueueFault({ drop: 'after' });
    harness.mock.enqueueFault({ status: 503, method: 'GET', path: '/v3/documents' });
    const id = await send('lookup-fails', 'documents@ingest.test');
    expect(await harness.settled(id, 0)).toBe('completed');
    expect(uploadsOf('lookup-fails.pdf')).toHaveLength(1);
    expect((await harness.record(id)).attachments[0]).toMatchObject({ state: 'uploaded', attempts: 3 });
  });

  it('uploads again (at least once) when the workspace template cannot name one upload, and said so at start', async () => {
    expect(
      harness.logs.lines.some(
        (line) => line.includes('does not name one upload') && line.includes('ws-loose'),
      ),
    ).toBe(true);
    harness.mock.enqueueFault({ drop: 'after' });
    const id = await send('loose', 'loose@ingest.test');
    expect(await harness.settled(id, 0)).toBe('completed');
    expect(uploadsOf('loose.pdf')).toHaveLength(2);
  });

  it('pauses on a refused key during the lookup, as on an upload, and finds the document once resumed', async () => {
    harness.mock.enqueueFault({ drop: 'after' });
    harness.mock.enqueueFault({ status: 401, method: 'GET', path: '/v3/documents' });
    const id = await send('lookup-401', 'documents@ingest.test');
    // Back to the wait list twice: the retry after the lost answer, then the pause (after its
    // entry says why), which shows in /readyz.
    await harness.handedBack(id, 0, 2);
    const readiness = async () => (await fetch(`${harness.httpUrl}/readyz`)).status;
    expect(await readiness()).toBe(503);
    expect((await harness.record(id)).attachments[0]?.reason).toMatch(/refused the API key/);
    harness.gateway.settings.replace({
      config: harness.config,
      apiBaseUrl: harness.mockUrl,
      apiKey: harness.apiKey,
    });
    expect(await harness.settled(id, 0)).toBe('completed');
    expect(uploadsOf('lookup-401.pdf')).toHaveLength(1);
    expect(await readiness()).toBe(200);
  });
});
