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
 * the entries older than the retention are dropped by an addition at least once a minute.
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

/**
 * Seconds between two upkeeps of the index by one process: the pruning of entries past the
 * retention and the renewal of the index's expiry. Done with every addition, they made it a
 * MULTI of five commands per accepted message, written on its own, where a ZADD gathered with
 * the other sessions' commands does: per 100 KB message (20 sessions, 1,200 messages) 30 -> 26
 * commands, redis-server's reads 7.6 -> 7.1 and answers 5.7 -> 5.2.
 */
export const INDEX_UPKEEP_SECONDS = 60;

export interface MessageIndexOptions {
  /** The clock, ms since the epoch; default Date.now (tests move it). */
  now?: () => number;
}

/** @param retentionSeconds retention.messages: how long a record, and so its entry, lives. */
export function createMessageIndex(
  redis: Redis | Cluster,
  keys: KeySpace,
  retentionSeconds: number,
  options: MessageIndexOptions = {},
): MessageIndex {
  const key = keys.messageIndex;
  const now = options.now ?? Date.now;
  /** When this process next prunes the index and renews its expiry (ms); 0: at the next add. */
  let upkeepDue = 0;

  return {
    async add(messageId, receivedAt) {
      const at = now();
      const parsed = Date.parse(receivedAt);
      const score = String(Number.isNaN(parsed) ? at : parsed);
      if (at < upkeepDue) {
        await redis.zadd(key, score, messageId);
        return;
      }
      upkeepDue = at + INDEX_UPKEEP_SECONDS * 1000;
      // One key, so one MULTI: the entry, the retention pruning, and an expiry on the whole
      // index, so an idle gateway's index goes with its last record. The expiry outlasts the
      // retention by the upkeep's interval: every record added before the next upkeep expires
      // before the index does.
      try {
        await redis
          .multi()
          .zadd(key, score, messageId)
          .zremrangebyscore(key, '-inf', `(${at - retentionSeconds * 1000}`)
          .expire(key, retentionSeconds + INDEX_UPKEEP_SECONDS)
          .exec();
      } catch (err) {
        upkeepDue = 0;
        throw err;
      }
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
