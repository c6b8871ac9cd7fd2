import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type TestRedis } from '../../harness/redis-server.ts';
import { createSenderRate, NOTICES_PER_SENDER } from '../../src/notices/sender-rate.ts';
import { createKeySpace } from '../../src/record/keys.ts';

/** At most ten notices a sender an hour, counted in Redis so every instance shares the count. */
describe('the sender’s hourly share of notices', () => {
  let redis: TestRedis;
  let client: Redis;
  const keys = createKeySpace('rate-test');

  beforeAll(async () => {
    redis = await startRedis();
    client = new Redis(redis.url);
  });
  afterAll(async () => {
    client?.disconnect();
    await redis?.close();
  });

  it('lets ten notices through in an hour, the eleventh not, and a retry of a counted one again', async () => {
    let clock = 1_000_000;
    const rate = createSenderRate(client, keys, NOTICES_PER_SENDER, 3_600_000, () => clock);
    const admitted: boolean[] = [];
    for (let notice = 1; notice <= 11; notice += 1) {
      admitted.push(await rate.admit('ap@Supplier.Example', `notice-${notice}`));
    }
    expect(admitted).toEqual([...Array(10).fill(true), false]);
    // The same notice tried again after the relay failed is not another notice.
    expect(await rate.admit('ap@supplier.example', 'notice-3')).toBe(true);
    // Another sender has a share of its own.
    expect(await rate.admit('billing@supplier.example', 'notice-12')).toBe(true);
    // An hour after the first, its place is free again.
    clock += 3_600_001;
    expect(await rate.admit('ap@supplier.example', 'notice-13')).toBe(true);
  });
});
