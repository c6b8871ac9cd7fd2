import { createHash } from 'node:crypto';
import { deliveryHash } from '../intake/decide.ts';
import type { KeySpace } from '../record/keys.ts';
import type { MessageIndex } from '../record/message-index.ts';
import type { MessageLedger } from '../record/message-ledger.ts';
import type { MessageRecord } from '../record/message-record.ts';
import type { RedisClient } from '../redis/connections.ts';
import { rawCopyLength, readRawRange } from '../store/raw-copy.ts';

export type DeleteOutcome =
  | { kind: 'deleted' }
  | { kind: 'missing' }
  /** An upload or a poll for its outcome is still to come: they would write to what is gone. */
  | { kind: 'busy'; reason: string };

/** Bytes of the raw copy read at once while its SHA-256 is computed. */
const RANGE_BYTES = 1024 * 1024;

/** Delete the delivery hash only while it still names this message (a compare-and-delete). */
const FORGET_DELIVERY = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/** Whether anything of the message is still in flight: an upload to come, or a poll. */
function inFlight(record: MessageRecord): string | null {
  const busy = record.attachments.filter(
    (entry) =>
      entry.state === 'queued' || entry.state === 'uploading' || entry.completion?.state === 'polling',
  );
  if (busy.length === 0) return null;
  const names = busy.map((entry) => entry.originalFileName ?? entry.fileName).join(', ');
  return `message ${record.id} still has uploads or parse-outcome polls in progress (${names}): delete it once they settle`;
}

/**
 * DELETE /v1/messages/{id} and the console's Delete button: everything the gateway keeps of
 * one message: its raw copy, record and stored documents (one hash tag, one MULTI), its entry
 * in the listing, its documents' source lookups, and the memory of its delivery, so the same
 * bytes sent again are a new message. A message with uploads still to come is refused (busy).
 */
export async function deleteMessage(
  redis: RedisClient,
  keys: KeySpace,
  ledger: MessageLedger,
  index: MessageIndex,
  messageId: string,
): Promise<DeleteOutcome> {
  const record = await ledger.read(messageId);
  if (record === null) return { kind: 'missing' };
  const busy = inFlight(record);
  if (busy !== null) return { kind: 'busy', reason: busy };
  const message = keys.message(messageId);
  const delivery = await deliveryKeyOf(redis, keys, record);
  const hashes = [...new Set(record.attachments.map((entry) => entry.sha256))];
  await redis.del(
    message.raw,
    message.record,
    ...hashes.flatMap((sha256) => [message.blob(sha256), message.span(sha256), message.blobRefs(sha256)]),
  );
  await index.remove([messageId]);
  for (const entry of record.attachments) {
    if (entry.documentIdentifier !== null) await redis.del(keys.document(entry.documentIdentifier));
  }
  if (delivery !== null) await redis.eval(FORGET_DELIVERY, 1, delivery, messageId);
  return { kind: 'deleted' };
}

/** The delivery hash's key, from the raw copy's SHA-256; null when the copy is gone. */
async function deliveryKeyOf(
  redis: RedisClient,
  keys: KeySpace,
  record: MessageRecord,
): Promise<string | null> {
  const key = keys.message(record.id).raw;
  const size = await rawCopyLength(redis, key);
  if (size === 0) return null;
  const hash = createHash('sha256');
  for (let start = 0; start < size; start += RANGE_BYTES) {
    hash.update(await readRawRange(redis, key, start, Math.min(size, start + RANGE_BYTES)));
  }
  return keys.delivery(deliveryHash(hash.digest('hex'), record.envelope.rcptTo));
}
