import { describe, expect, it } from 'vitest';
import { LogSink } from '../../../harness/gateway-harness.ts';
import { createLogger } from '../../../src/logger.ts';
import { createRetryPromotion } from '../../../src/uploader/retry-promotion.ts';

function promotion(waiting = 3) {
  let clock = 1_000_000;
  const at = (ms: number) => {
    clock = 1_000_000 + ms;
  };
  let promotions = 0;
  const sink = new LogSink();
  const subject = createRetryPromotion({
    logger: createLogger({ level: 'info', destination: sink }),
    now: () => clock,
    async promote() {
      promotions++;
      return waiting;
    },
  });
  return { subject, at, promotions: () => promotions, sink };
}

describe('retry promotion after an outage', () => {
  it('promotes the waiting retries on the first success after a retry was scheduled, once', async () => {
    const { subject, promotions, sink } = promotion();
    subject.succeeded();
    expect(promotions()).toBe(0);
    subject.retryScheduled(undefined);
    subject.succeeded();
    subject.succeeded();
    await subject.settled();
    expect(promotions()).toBe(1);
    const lines = sink.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toMatchObject([{ msg: 'uploads succeed again: waiting retries promoted', promoted: 3 }]);
  });

  it('waits out the latest Retry-After before promoting', async () => {
    const { subject, at, promotions } = promotion();
    subject.retryScheduled('120');
    subject.retryScheduled('30');
    at(119_000);
    subject.succeeded();
    expect(promotions()).toBe(0);
    at(120_000);
    subject.succeeded();
    await subject.settled();
    expect(promotions()).toBe(1);
  });

  it('keeps ten seconds between promotions, then promotes for the next trouble', async () => {
    const { subject, at, promotions } = promotion();
    subject.retryScheduled(undefined);
    subject.succeeded();
    await subject.settled();
    at(5_000);
    subject.retryScheduled(undefined);
    subject.succeeded();
    expect(promotions()).toBe(1);
    at(10_000);
    subject.succeeded();
    await subject.settled();
    expect(promotions()).toBe(2);
  });

  it('says nothing when no retry was waiting, and survives a failed promotion', async () => {
    const quiet = promotion(0);
    quiet.subject.retryScheduled(undefined);
    quiet.subject.succeeded();
    await quiet.subject.settled();
    expect(quiet.sink.lines).toEqual([]);

    const sink = new LogSink();
    const failing = createRetryPromotion({
      logger: createLogger({ level: 'info', destination: sink }),
      promote: () => Promise.reject(new Error('Connection is closed.')),
    });
    failing.retryScheduled(undefined);
    failing.succeeded();
    await failing.settled();
    expect(sink.lines.map((line) => JSON.parse(line) as Record<string, unknown>)).toMatchObject([
      { level: 40, msg: 'could not promote the waiting retries' },
    ]);
  });
});
