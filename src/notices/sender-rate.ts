import { createHash } from 'node:crypto';
import type { KeySpace } from '../record/keys.ts';
import type { RedisClient } from '../redis/connections.ts';

/** Notices one sender gets at most per window: a loop that slips past every other rule stays small. */
export const NOTICES_PER_SENDER = 10;
/** The window of NOTICES_PER_SENDER, ms: one hour. */
export const SENDER_WINDOW_MS = 3_600_000;

/**
 * A sliding window per sender, in one sorted set of notice ids scored by when each was let
 * through: one id already let through is let through again (a retry after the relay failed
 * is the same notice, not another one), a new one only while fewer than the limit are in the window.
 * Shared by every instance through Redis.
 */
const admitScript = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1] - ARGV[2])
if redis.call('ZSCORE', KEYS[1], ARGV[4]) then return 1 end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;

export interface SenderRate {
  /** True when notice `noticeId` may go to `sender` now (and it is counted); false when the sender had its share. */
  admit(sender: string, noticeId: string): Promise<boolean>;
}

export function createSenderRate(
  redis: RedisClient,
  keys: KeySpace,
  limit = NOTICES_PER_SENDER,
  windowMs = SENDER_WINDOW_MS,
  now: () => number = Date.now,
): SenderRate {
  return {
    async admit(sender, noticeId) {
      // The address is compared as the envelope gave it, its domain lower-cased.
      const at = sender.lastIndexOf('@');
      const normalized = at === -1 ? sender : `${sender.slice(0, at)}@${sender.slice(at + 1).toLowerCase()}`;
      const digest = createHash('sha256').update(normalized).digest('hex').slice(0, 32);
      const answer = await redis.eval(
        admitScript,
        1,
        keys.noticeRate(digest),
        String(now()),
        String(windowMs),
        String(limit),
        noticeId,
      );
      return answer === 1;
    },
  };
}
