import type { Cluster, Redis } from 'ioredis';
import type { KeySpace } from './keys.ts';

/**
 * The listing index of GET /v1/messages: one sorted set of message ids scored by receivedAt
 * (milliseconds since the epoch), so "newest first" is a reverse range.
 *
 * The index is a convenience beside the records, never their truth. It has a hash tag of its
 * own, so it cannot join the message's commit MULTI (Redis Cluster): the producer adds the
 * entry right after the commit, and adding is idempotent (ZADD of the same member and score).
 * A crash between the two leaves a record without an entry: it is still read by id, and a
 * repeated delivery of that message adds the entry when it finishes the earlier commit. An
 * entry whose record has expired (retention.messages) is pruned when a reader meets it, and
 * every addition drops the entries older than the retention.
 */
export interface MessageIndex {
  /** Index a committed message; idempotent. */
  add(messageId: string, receivedAt: string): Promise<void>;
  /**
   * Up to `count` entries, newest first, strictly after `after` in that order (null: from the
   * newest), and no older than `since` (ms; null: any age).
   */
  page(after: IndexPosition | null, count: number, since: number | null): Promise<IndexPosition[]>;
  /** Drop entries whose records are gone. */
  remove(messageIds: readonly string[]): Promise<void>;
}

/** Where an entry stands in the index: its score and id (equal scores order by id). */
export interface IndexPosition {
  id: string;
  receivedAt: number;
}

/** @param retentionSeconds retention.messages: how long a record, and so its entry, lives. */
export function createMessageIndex(
  redis: Redis | Cluster,
  keys: KeySpace,
  retentionSeconds: number,
): MessageIndex {
  const key = keys.messageIndex;

  return {
    async add(messageId, receivedAt) {
      const score = Date.parse(receivedAt);
      const expired = Date.now() - retentionSeconds * 1000;
      // One key, so one MULTI: the entry, the retention pruning, and an expiry on the whole
      // index, so an idle gateway's index goes with its last record.
      await redis
        .multi()
        .zadd(key, String(Number.isNaN(score) ? Date.now() : score), messageId)
        .zremrangebyscore(key, '-inf', `(${expired}`)
        .expire(key, retentionSeconds)
        .exec();
    },

    async page(after, count, since) {
      const max = after === null ? '+inf' : String(after.receivedAt);
      const min = since === null ? '-inf' : String(since);
      const found: IndexPosition[] = [];
      // Equal scores come in descending id order (ZRANGE … REV): entries of the cursor's own
      // millisecond at or above its id were returned already, and are skipped.
      for (let offset = 0; found.length < count; ) {
        const want = count - found.length;
        const reply = await redis.zrange(
          key,
          max,
          min,
          'BYSCORE',
          'REV',
          'LIMIT',
          offset,
          want,
          'WITHSCORES',
        );
        offset += reply.length / 2;
        for (let i = 0; i + 1 < reply.length; i += 2) {
          const id = reply[i] ?? '';
          const receivedAt = Number(reply[i + 1]);
          if (after !== null && receivedAt === after.receivedAt && id >= after.id) continue;
          found.push({ id, receivedAt });
        }
        if (reply.length < want * 2) break;
      }
      return found;
    },

    async remove(messageIds) {
      if (messageIds.length > 0) await redis.zrem(key, ...messageIds);
    },
  };
}
