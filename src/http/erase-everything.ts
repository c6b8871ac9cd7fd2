import { Cluster, type Redis } from 'ioredis';
import type { RedisClient } from '../redis/connections.ts';

/** Keys asked for per SCAN step and deleted per UNLINK: bounded work per round trip. */
const batchKeys = 500;

/**
 * DELETE /v1/messages (http.allowReset): removes every key under `<prefix>:`, which is all the
 * gateway stores: records, raw copies, blobs, the listing and document indexes, delivery
 * hashes, rate-limit counters, and the BullMQ queues' jobs (their prefix is `<prefix>:{queue}`).
 * Meant for test isolation between tests, when nothing is in flight: a message in DATA
 * meanwhile loses its parts and is answered 451, and a job being uploaded finishes into a
 * queue that no longer knows it. Returns how many keys were deleted.
 *
 * SCAN walks one server's keys: on a Redis Cluster each master is scanned, and its keys are
 * unlinked one by one (a multi-key UNLINK must not span slots).
 */
export async function eraseEverything(redis: RedisClient, prefix: string): Promise<number> {
  const servers = redis instanceof Cluster ? redis.nodes('master') : [redis];
  const counts = await Promise.all(servers.map((server) => eraseOn(server, `${escapeGlob(prefix)}:*`)));
  return counts.reduce((sum, count) => sum + count, 0);
}

async function eraseOn(server: Redis, pattern: string): Promise<number> {
  let deleted = 0;
  let cursor = '0';
  do {
    const [next, keys] = await server.scan(cursor, 'MATCH', pattern, 'COUNT', batchKeys);
    cursor = next;
    if (keys.length === 0) continue;
    const pipeline = server.pipeline();
    for (const key of keys) pipeline.unlink(key);
    for (const [err, count] of (await pipeline.exec()) ?? []) {
      if (err) throw err;
      deleted += Number(count);
    }
  } while (cursor !== '0');
  return deleted;
}

/** The prefix taken literally by MATCH, whatever glob characters it holds. */
function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}
