import { Queue } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, type HarnessOptions, startHarness } from '../../harness/gateway-harness.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { deliver, queuedId } from '../../harness/smtp-session.ts';
import { uploadJobId, uploadQueueName } from '../../src/queue/upload-queue.ts';
import { createKeySpace } from '../../src/record/keys.ts';

/**
 * Documents accepted while the service was failing reach it as soon as it answers again, not
 * when their backoff ends. Each retry here waits its whole first window, a minute (jitter 1),
 * longer than vitest lets a test run: a document that is uploaded was promoted.
 */
const longBackoff: HarnessOptions = {
  random: () => 1,
  upload: { concurrency: 2, attempts: 5, retryBaseDelay: 60_000, retryMaxDelay: 3_600_000 },
};

describe('retries promoted after an outage', () => {
  let harness: Harness | undefined;
  let queue: Queue | undefined;
  afterEach(async () => {
    await queue?.close();
    await harness?.close();
    queue = harness = undefined;
  });

  async function send(label: string): Promise<string> {
    const running = harness as Harness;
    const message = await composeMessage({
      to: 'documents@ingest.test',
      attachments: [{ filename: `${label}.pdf`, content: uniquePdf(label) }],
    });
    const { data } = await deliver(running.smtpPort, { to: ['documents@ingest.test'], message });
    return queuedId(data);
  }

  /** Resolves once `count` uploads wait out a backoff. */
  async function waitingRetries(count: number): Promise<void> {
    const running = harness as Harness;
    queue ??= new Queue(uploadQueueName, {
      connection: { host: '127.0.0.1', port: running.redis.port },
      prefix: createKeySpace(running.config.redis.prefix).queuePrefix,
    });
    for (;;) {
      const delayed = await queue.getJobs(['delayed']);
      if (delayed.length >= count) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Three documents fail with 503 and wait a minute each; the fourth goes through. */
  async function outageThenRecovery(fault: { status: number; retryAfter?: number }): Promise<string[]> {
    const running = harness as Harness;
    running.mock.enqueueFault({ ...fault, times: 3 });
    const during = [await send('during-1'), await send('during-2'), await send('during-3')];
    await waitingRetries(3);
    const after = await send('after');
    expect(await running.settled(after, 0)).toBe('completed');
    return during;
  }

  it('uploads the documents that failed during the outage once an upload succeeds again', async () => {
    harness = await startHarness(longBackoff);
    const during = await outageThenRecovery({ status: 503 });
    for (const id of during) expect(await harness.settled(id, 0)).toBe('completed');
    const records = await Promise.all(during.map((id) => (harness as Harness).record(id)));
    expect(records.map((record) => record.attachments[0]?.state)).toEqual([
      'uploaded',
      'uploaded',
      'uploaded',
    ]);
    expect(records.map((record) => record.attachments[0]?.attempts)).toEqual([2, 2, 2]);
    const promoted = harness.logs.lines.filter((line) => line.includes('waiting retries promoted'));
    expect(promoted).toHaveLength(1);
    expect(JSON.parse(promoted[0] ?? '{}')).toMatchObject({ promoted: 3 });
  });

  it('leaves them waiting while the service’s Retry-After lasts', async () => {
    harness = await startHarness(longBackoff);
    const from = harness.logs.lines.length;
    const during = await outageThenRecovery({ status: 503, retryAfter: 3600 });
    await harness.logs.waitFor(
      (line) => line.includes('waiting retries kept until Retry-After has passed'),
      from,
    );
    const states = await Promise.all(
      during.map(async (id) => (await (queue as Queue).getJob(uploadJobId(id, 0)))?.getState()),
    );
    expect(states).toEqual(['delayed', 'delayed', 'delayed']);
    expect(harness.logs.lines.some((line) => line.includes('waiting retries promoted'))).toBe(false);
  });

  it('leaves them to their backoff with upload.promoteAfterRecovery off', async () => {
    harness = await startHarness({
      ...longBackoff,
      upload: { ...longBackoff.upload, promoteAfterRecovery: false },
    });
    const during = await outageThenRecovery({ status: 503 });
    // A second success after the first: a promotion, had there been one, would have run by now.
    expect(await harness.settled(await send('later'), 0)).toBe('completed');
    const states = await Promise.all(
      during.map(async (id) => (await (queue as Queue).getJob(uploadJobId(id, 0)))?.getState()),
    );
    expect(states).toEqual(['delayed', 'delayed', 'delayed']);
  });
});
