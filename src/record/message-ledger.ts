import type { Cluster, Redis } from 'ioredis';
import type { KeySpace } from './keys.ts';
import type { AttachmentEntry, DocumentSource, MessageRecord, MessageSummary } from './message-record.ts';

/**
 * The message records: one Redis hash per message (`summary`, `status`, and one field per
 * attachment entry, so a worker updates its own entry without touching the others), and the
 * index from document identifier to its source.
 */
export interface MessageLedger {
  read(messageId: string): Promise<MessageRecord | null>;
  readEntry(messageId: string, entry: number): Promise<AttachmentEntry | null>;
  /** Replace fields of one entry; returns the updated entry, null when the record is gone. */
  updateEntry(messageId: string, entry: number, patch: EntryPatch): Promise<AttachmentEntry | null>;
  /**
   * Replace fields of one entry as `revise` decides from the entry as it is: null leaves it
   * alone. Returns the entry as it is afterwards, null when the record is gone.
   */
  reviseEntry(
    messageId: string,
    entry: number,
    revise: (current: AttachmentEntry) => EntryPatch | null,
  ): Promise<AttachmentEntry | null>;
  markEnqueued(messageId: string): Promise<void>;
  recordDocument(source: DocumentSource): Promise<void>;
  findDocument(documentIdentifier: string): Promise<DocumentSource | null>;
}

export type EntryPatch = Partial<Omit<AttachmentEntry, 'entry'>>;

export const entryField = (entry: number): string => `entry:${entry}`;

/** The hash fields of a new record, for the producer's commit transaction. */
export function recordFields(
  summary: MessageSummary,
  entries: readonly AttachmentEntry[],
): Record<string, string> {
  const fields: Record<string, string> = {
    summary: JSON.stringify(summary),
    status: 'committed',
    entries: String(entries.length),
  };
  for (const entry of entries) fields[entryField(entry.entry)] = JSON.stringify(entry);
  return fields;
}

/**
 * Writes an entry only if it still holds what the writer read (compare and set). Several
 * writers change one entry (the upload worker, completion tracking, an operator's retry):
 * a read-then-write would let one undo another's change. A script that merged the patch
 * itself would need cjson, which writes an empty array as `{}`; WATCH needs a connection
 * of its own, since any other caller's EXEC on a shared connection clears it. This keeps
 * the entry one JSON value, as every reader expects. Returns 1 when written, 0 when the
 * entry changed meanwhile, -1 when it is gone.
 */
const COMPARE_AND_SET_ENTRY = `
local current = redis.call('HGET', KEYS[1], ARGV[1])
if not current then return -1 end
if current ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
`;

/** Tries before an update gives up: each lost race means another writer made progress. */
const MAX_ENTRY_RACES = 20;

/**
 * @param documentTtlSeconds how long the document index outlives the upload: retention.messages,
 *   since the sourceEmail it points to lives that long.
 */
export function createMessageLedger(
  redis: Redis | Cluster,
  keys: KeySpace,
  documentTtlSeconds: number,
): MessageLedger {
  async function readEntry(messageId: string, entry: number): Promise<AttachmentEntry | null> {
    const value = await redis.hget(keys.message(messageId).record, entryField(entry));
    return value === null ? null : (JSON.parse(value) as AttachmentEntry);
  }

  async function reviseEntry(
    messageId: string,
    entry: number,
    revise: (current: AttachmentEntry) => EntryPatch | null,
  ): Promise<AttachmentEntry | null> {
    const key = keys.message(messageId).record;
    const field = entryField(entry);
    for (let race = 0; race < MAX_ENTRY_RACES; race++) {
      const read = await redis.hget(key, field);
      if (read === null) return null;
      const current = JSON.parse(read) as AttachmentEntry;
      const patch = revise(current);
      if (patch === null) return current;
      const next: AttachmentEntry = { ...current, ...patch, entry, updatedAt: new Date().toISOString() };
      const written = await redis.eval(COMPARE_AND_SET_ENTRY, 1, key, field, read, JSON.stringify(next));
      if (written === 1) return next;
      if (written === -1) return null;
    }
    throw new Error(`entry ${entry} of message ${messageId} kept changing under ${MAX_ENTRY_RACES} updates`);
  }

  return {
    async read(messageId) {
      const fields = await redis.hgetall(keys.message(messageId).record);
      const summary = fields.summary;
      if (summary === undefined) return null;
      const count = Number(fields.entries ?? '0');
      const attachments: AttachmentEntry[] = [];
      for (let i = 0; i < count; i++) {
        const value = fields[entryField(i)];
        if (value !== undefined) attachments.push(JSON.parse(value) as AttachmentEntry);
      }
      return {
        ...(JSON.parse(summary) as MessageSummary),
        status: fields.status === 'enqueued' ? 'enqueued' : 'committed',
        attachments,
      };
    },
    readEntry,
    updateEntry: (messageId, entry, patch) => reviseEntry(messageId, entry, () => patch),
    reviseEntry,
    async markEnqueued(messageId) {
      await redis.hset(keys.message(messageId).record, 'status', 'enqueued');
    },
    async recordDocument(source) {
      await redis.set(
        keys.document(source.documentIdentifier),
        JSON.stringify(source),
        'EX',
        documentTtlSeconds,
      );
    },
    async findDocument(documentIdentifier) {
      const value = await redis.get(keys.document(documentIdentifier));
      return value === null ? null : (JSON.parse(value) as DocumentSource);
    },
  };
}
