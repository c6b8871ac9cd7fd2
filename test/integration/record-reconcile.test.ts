import { Queue, UnrecoverableError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, LogSink, startHarness } from '../../harness/gateway-harness.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { deliver, queuedId } from '../../harness/smtp-session.ts';
import { startGateway } from '../../src/gateway.ts';
import { createLogger } from '../../src/logger.ts';
import { type UploadJobData, uploadJobId, uploadQueueName } from '../../src/queue/upload-queue.ts';
import { createKeySpace } from '../../src/record/keys.ts';
import { createMessageLedger } from '../../src/record/message-ledger.ts';
import { createRecordReconciler } from '../../src/uploader/reconcile-records.ts';

/**
 * A worker that dies the instant BullMQ finishes its job never writes the entry: the record
 * says `queued` while the job is failed or completed. The next gateway start repairs it
 * from the job's state.
 */
describe('message records reconciled with finished upload jobs', () => {
  let harness: Harness;

  beforeAll(async () => {
    // Intake only: no upload worker of the gateway's takes the jobs.
    harness = await startHarness({ role: 'smtp' });
  });
  afterAll(async () => harness?.close());

  async function accept(label: string): Promise<string> {
    const message = await composeMessage({
      to: 'documents@ingest.test',
      attachments: [{ filename: `${label}.pdf`, content: uniquePdf(label) }],
    });
    return queuedId((await deliver(harness.smtpPort, { to: ['documents@ingest.test'], message })).data);
  }

  /** Stands in for a worker whose process ends before its record write: BullMQ finishes the job, nothing writes the entry. */
  function crashingWorker(fail: (messageId: string) => boolean): Worker<UploadJobData> {
    const worker = new Worker<UploadJobData>(
      uploadQueueName,
      async (job) => {
        if (fail(job.data.messageId)) throw new UnrecoverableError('worker lost mid-upload');
        return { documentIdentifier: 'DOC-RECONCILED', state: 'uploaded', reason: null };
      },
      {
        connection: { host: '127.0.0.1', port: harness.redis.port, maxRetriesPerRequest: null },
        prefix: createKeySpace(harness.config.redis.prefix).queuePrefix,
      },
    );
    worker.on('error', () => undefined);
    return worker;
  }

  it('records a failed job failed, and a completed one settled, at the next start', async () => {
    const lost = await accept('reconcile-failed');
    const finished = await accept('reconcile-completed');
    const crashing = crashingWorker((messageId) => messageId === lost);
    expect(await harness.settled(lost, 0)).toBe('failed');
    expect(await harness.settled(finished, 0)).toBe('completed');
    await crashing.close();
    expect((await harness.record(lost)).attachments[0]?.state).toBe('queued');
    expect((await harness.record(finished)).attachments[0]?.state).toBe('queued');

    const logs = new LogSink();
    const worker = await startGateway({
      config: harness.config,
      role: 'worker',
      logger: createLogger({ level: 'info', destination: logs }),
      redisUrl: harness.redis.url,
      apiBaseUrl: harness.mockUrl,
      apiKey: harness.apiKey,
    });
    try {
      const [failedEntry] = (await harness.record(lost)).attachments;
      expect(failedEntry).toMatchObject({ state: 'failed', reason: 'gave up: worker lost mid-upload' });
      const [settledEntry] = (await harness.record(finished)).attachments;
      expect(settledEntry).toMatchObject({ state: 'uploaded', documentIdentifier: 'DOC-RECONCILED' });
      const repaired = logs.lines.filter((line) => line.includes('its entry queued is recorded'));
      expect(repaired.some((line) => line.includes(`"jobId":"${uploadJobId(lost, 0)}"`))).toBe(true);
      expect(repaired.some((line) => line.includes(`"jobId":"${uploadJobId(finished, 0)}"`))).toBe(true);
      expect(harness.mock.uploads).toHaveLength(0);
    } finally {
      await worker.close();
    }
  });

  it('repairs a bounded batch per pass, resuming where the last pass stopped', async () => {
    const ids: string[] = [];
    for (const label of ['batch-1', 'batch-2', 'batch-3']) ids.push(await accept(label));
    const crashing = crashingWorker(() => true);
    for (const id of ids) expect(await harness.settled(id, 0)).toBe('failed');
    await crashing.close();

    const keys = createKeySpace(harness.config.redis.prefix);
    const redis = new Redis(harness.redis.url);
    const queue = new Queue<UploadJobData>(uploadQueueName, { connection: redis, prefix: keys.queuePrefix });
    const reconciler = createRecordReconciler({
      queue,
      ledger: createMessageLedger(redis, keys, 3600),
      logger: createLogger({ level: 'silent' }),
      batch: 2,
    });
    const states = async () =>
      Promise.all(ids.map(async (id) => (await harness.record(id)).attachments[0]?.state));
    try {
      // Oldest first, 2 per pass: the earlier test's failed job (recorded already) and batch-1,
      // then batch-2 and batch-3, then nothing left.
      expect(await reconciler.pass()).toBe(1);
      expect(await reconciler.pass()).toBe(2);
      expect(await states()).toEqual(['failed', 'failed', 'failed']);
      expect(await reconciler.pass()).toBe(0);
    } finally {
      await reconciler.close();
      await queue.close();
      await redis.quit();
    }
  });
});
