import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createKeySpace } from '../../src/record/keys.ts';
import { createMessageIndex, type IndexPosition } from '../../src/record/message-index.ts';
import { startRedis, type TestRedis } from '../support/redis-server.ts';

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
    const ttl = await redis.ttl(keys.messageIndex);
    expect(ttl).toBeGreaterThan(retention - 60);
    expect(ttl).toBeLessThanOrEqual(retention);
  });

  it('removes the entries it is told are gone', async () => {
    await index().add('a', at(now));
    await index().add('b', at(now));
    await index().remove(['a']);
    await index().remove([]);
    expect(await walk(10)).toEqual(['b']);
  });
});
