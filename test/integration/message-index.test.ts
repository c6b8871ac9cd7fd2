import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startRedis, type TestRedis } from '../../harness/redis-server.ts';
import { createKeySpace } from '../../src/record/keys.ts';
import {
  createMessageIndex,
  INDEX_UPKEEP_SECONDS,
  type IndexPosition,
} from '../../src/record/message-index.ts';

/** The listing index on a real Redis: order, paging through equal times, retention. */
describe('message index', () => {
  let server: TestRedis;
  let redis: Redis;
  const keys = createKeySpace('idx');
  const retention = 3600;
  const index = () => createMessageIndex(redis, keys, retention);
  const at = (ms: number) => new Date(ms).toISOString();
  const now = Date.now();

  beforeAll(async () => {
    server = await startRedis();
    redis = new Redis(server.url);
  });
  beforeEach(async () => {
    await redis.del(keys.messageIndex);
  });
  afterAll(async () => {
    redis?.disconnect();
    await server?.close();
  });

  async function walk(pageSize: number, since: number | null = null): Promise<string[]> {
    const seen: string[] = [];
    let after: IndexPosition | null = null;
    for (let round = 0; round < 50; round++) {
      const page: IndexPosition[] = await index().page(after, pageSize, since);
      seen.push(...page.map((entry) => entry.id));
      if (page.length < pageSize) return seen;
      after = page.at(-1) ?? null;
    }
    throw new Error('the walk did not end');
  }

  it('pages newest first through entries of the same millisecond, each once', async () => {
    const ids = ['a', 'b', 'c', 'd', 'e'];
    for (const id of ids) await index().add(id, at(now - 1000));
    await index().add('newest', at(now));
    await index().add('oldest', at(now - 2000));
    const expected = ['newest', 'e', 'd', 'c', 'b', 'a', 'oldest'];
    for (const size of [1, 2, 3, 10]) expect(await walk(size), `pages of ${size}`).toEqual(expected);
  });

  it('adds idempotently', async () => {
    await index().add('a', at(now));
    await index().add('a', at(now));
    expect(await redis.zcard(keys.messageIndex)).toBe(1);
  });

  it('stops at since', async () => {
    await index().add('old', at(now - 5000));
    await index().add('new', at(now));
    expect(await walk(10, now - 1000)).toEqual(['new']);
  });

  it('drops entries past the retention when adding, and lets the index expire with it', async () => {
    await redis.zadd(keys.messageIndex, now - (retention + 10) * 1000, 'expired');
    await index().add('fresh', at(now));
    expect(await redis.zrange(keys.messageIndex, '0', '-1')).toEqual(['fresh']);
    // It outlasts the retention by the upkeep's interval: a record added until the next upkeep
    // expires before the index does.
    const ttl = await redis.ttl(keys.messageIndex);
    expect(ttl).toBeGreaterThan(retention + INDEX_UPKEEP_SECONDS - 60);
    expect(ttl).toBeLessThanOrEqual(retention + INDEX_UPKEEP_SECONDS);
  });

  it('prunes and renews its expiry once per upkeep interval, and only adds in between', async () => {
    let clock = now;
    const timed = createMessageIndex(redis, keys, retention, { now: () => clock });
    await timed.add('first', at(clock));
    expect(await redis.ttl(keys.messageIndex)).toBeGreaterThan(retention);
    // Within the interval: the entry is added, nothing pruned, the expiry left as it is.
    await redis.zadd(keys.messageIndex, clock - (retention + 10) * 1000, 'expired');
    await redis.expire(keys.messageIndex, 100);
    clock += (INDEX_UPKEEP_SECONDS - 1) * 1000;
    await timed.add('second', at(clock));
    expect((await redis.zrange(keys.messageIndex, '0', '-1')).sort()).toEqual(['expired', 'first', 'second']);
    expect(await redis.ttl(keys.messageIndex)).toBeLessThanOrEqual(100);
    // The interval over: the next add prunes and renews.
    clock += 1000;
    await timed.add('third', at(clock));
    expect((await redis.zrange(keys.messageIndex, '0', '-1')).sort()).toEqual(['first', 'second', 'third']);
    expect(await redis.ttl(keys.messageIndex)).toBeGreaterThan(retention);
  });

  it('gives an index re-created between upkeeps an expiry at the next upkeep', async () => {
    let clock = now;
    const timed = createMessageIndex(redis, keys, retention, { now: () => clock });
    await timed.add('first', at(clock));
    // Erased (DELETE /v1/messages), then added to before the next upkeep: no expiry yet.
    await redis.del(keys.messageIndex);
    await timed.add('second', at(clock));
    expect(await redis.ttl(keys.messageIndex)).toBe(-1);
    clock += INDEX_UPKEEP_SECONDS * 1000;
    await timed.add('third', at(clock));
    expect(await redis.ttl(keys.messageIndex)).toBeGreaterThan(retention);
  });

  it('removes the entries it is told are gone', async () => {
    await index().add('a', at(now));
    await index().add('b', at(now));
    await index().remove(['a']);
    await index().remove([]);
    expect(await walk(10)).toEqual(['b']);
  });
});
