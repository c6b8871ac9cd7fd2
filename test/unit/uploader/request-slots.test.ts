import { describe, expect, it } from 'vitest';
import { createRequestSlots, jobsInFlight } from '../../../src/uploader/request-slots.ts';

/** A request the test settles by hand. */
function pending(): {
  promise: Promise<string>;
  resolve: (value: string) => void;
  reject: (err: Error) => void;
} {
  let resolve: (value: string) => void = () => undefined;
  let reject: (err: Error) => void = () => undefined;
  const promise = new Promise<string>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('request slots', () => {
  it('runs no more requests at once than its limit, the waiting ones first come first served', async () => {
    const slots = createRequestSlots(2);
    const requests = [pending(), pending(), pending(), pending()];
    const started: number[] = [];
    const runs = requests.map((request, index) =>
      slots.run(() => {
        started.push(index);
        return request.promise;
      }),
    );
    await Promise.resolve();
    expect(started).toEqual([0, 1]);
    requests[1]?.resolve('one');
    expect(await runs[1]).toBe('one');
    expect(started).toEqual([0, 1, 2]);
    requests[0]?.resolve('zero');
    await runs[0];
    expect(started).toEqual([0, 1, 2, 3]);
    requests[2]?.resolve('two');
    requests[3]?.resolve('three');
    expect(await Promise.all(runs)).toEqual(['zero', 'one', 'two', 'three']);
  });

  it('frees the slot of a request that failed', async () => {
    const slots = createRequestSlots(1);
    const failing = pending();
    const first = slots.run(() => failing.promise);
    const second = slots.run(async () => 'ran');
    failing.reject(new Error('refused'));
    await expect(first).rejects.toThrow('refused');
    expect(await second).toBe('ran');
    // The slot is free again: a later request runs at once.
    expect(await slots.run(async () => 'again')).toBe('again');
  });
});

describe('jobsInFlight', () => {
  it.each([
    { concurrency: 1, jobs: 2 },
    { concurrency: 2, jobs: 3 },
    { concurrency: 3, jobs: 5 },
    { concurrency: 8, jobs: 12 },
    { concurrency: 256, jobs: 384 },
  ])('$concurrency requests in flight: $jobs jobs', ({ concurrency, jobs }) => {
    expect(jobsInFlight(concurrency)).toBe(jobs);
  });
});
