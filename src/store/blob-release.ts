import type { KeySpace } from '../record/keys.ts';
import type { RedisClient } from '../redis/connections.ts';

/**
 * Remove an entry from the users of its blob and delete the blob (or the span of the raw copy
 * that stands for it, stored-document.ts) when none is left, in one
 * script so that two uploads of the same bytes (one file to two workspaces, or attached twice)
 * cannot both see "one left". Removing an entry that is already gone changes nothing, so a job
 * that runs twice releases once.
 */
const releaseScript = `
redis.call('SREM', KEYS[1], ARGV[1])
if redis.call('SCARD', KEYS[1]) == 0 then
  redis.call('DEL', KEYS[2], KEYS[3])
  return 1
end
return 0`;

/** Returns true when the blob was deleted. */
export async function releaseBlob(
  redis: RedisClient,
  keys: KeySpace,
  ref: { messageId: string; sha256: string; entry: number },
): Promise<boolean> {
  const messageKeys = keys.message(ref.messageId);
  const deleted = await redis.eval(
    releaseScript,
    3,
    messageKeys.blobRefs(ref.sha256),
    messageKeys.blob(ref.sha256),
    messageKeys.span(ref.sha256),
    String(ref.entry),
  );
  return deleted === 1;
}
