import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { deliver, queuedId } from '../../harness/smtp-session.ts';
import { type UploadJobData, uploadJobId, uploadQueueName } from '../../src/queue/upload-queue.ts';
import { createKeySpace } from '../../src/record/keys.ts';

/**
 * Redis dies (SIGKILL) while the parsing service is answering an upload and comes back a
 * moment later: the upload is finished, so its settlement waits for Redis instead of failing
 * the job into a retry.
 */
describe('a finished upload across a Redis crash', () => {
  let harness: Harness;
  let queue: Queue<UploadJobData>;

  beforeAll(async () => {
    harness = await startHarness({
      // Every write on disk before Redis acknowledges it, so the restart finds the job and record.
      redisServer: { appendonly: 'yes', appendfsync: 'always' },
      // wait: true makes the mock answer after its processing time: Redis is dead by then.
      processingMs: 1500,
      workspaces: [{ identifier: 'ws-wait', ingestEmail: 'documents@ingest.test', upload: { wait: true } }],
    });
    queue = new Queue<UploadJobData>(uploadQueueName, {
      connection: { host: '127.0.0.1', port: harness.redis.port, maxRetriesPerRequest: null },
      prefix: createKeySpace(harness.config.redis.prefix).queuePrefix,
    });
    queue.on('error', () => undefined);
  });
  afterAll(async () => {
    await queue?.close();
    await harness?.close();
  });

  it('records the upload once Redis is back, with one upload and no retry', async () => {
    const killed: Array<Promise<void>> = [];
    const unsubscribe = harness.mock.onUpload(() => killed.push(harness.redis.stop()));
    const message = await composeMessage({
      to: 'documents@ingest.test',
      attachments: [{ filename: 'crash.pdf', content: uniquePdf('settle-through-outage') }],
    });
    const id = queuedId((await deliver(harness.smtpPort, { to: ['documents@ingest.test'], message })).data);
    const jobId = uploadJobId(id, 0);

    await harness.logs.waitFor(
      (line) => line.includes('its settlement waits for Redis') && line.includes(`"jobId":"${jobId}"`),
    );
    unsubscribe();
    await Promise.all(killed);
    await harness.redis.start();

    expect(await harness.settled(id, 0)).toBe('completed');
    const uploads = harness.mock.uploads.filter((upload) => upload.file?.fileName === 'crash.pdf');
    expect(uploads).toHaveLength(1);
    const [entry] = (await harness.record(id)).attachments;
    expect(entry?.state).toBe('uploaded');
    expect(entry?.documentIdentifier).toBe(uploads[0]?.documentIdentifier);
    expect(entry?.attempts).toBe(1);
    const job = await queue.getJob(jobId);
    expect(job?.attemptsStarted).toBe(1);
    expect(job?.returnvalue).toMatchObject({
      documentIdentifier: uploads[0]?.documentIdentifier,
      state: 'uploaded',
    });
    const lines = harness.logs.lines.filter((line) => line.includes(`"jobId":"${jobId}"`));
    expect(lines.some((line) => line.includes('upload will be retried'))).toBe(false);
    expect(lines.some((line) => line.includes('Redis is back: the settlement went through'))).toBe(true);
  });
});
