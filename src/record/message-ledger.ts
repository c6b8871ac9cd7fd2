import type { Cluster, Redis } from 'ioredis';
import type { KeySpace } from './keys.ts';
import {
  type AttachmentEntry,
  type DocumentSource,
  finalStates,
  type MessageRecord,
  type MessageSummary,
} from './message-record.ts';

/**
 * The message records: one Redis hash per message (`summary`, `status`, and one field per
 * attachment entry, so a worker updates its own entry without touching the others), and the
 * index from document identifier to its source. An entry that reaches a final state is announced
 * on keys.settledChannel, after it is written, so a long poll (GET /v1/messages?wait=) wakes.
 */
export interface MessageLedger {
  read(messageId: string): Promise<MessageRecord | null>;
  readEntry(messageId: string, entry: number): Promise<AttachmentEntry | null>;
  /**
   * The record and one of its entries in one read, the entry with its stored text for a later
   * `replaceEntry`; the record is null when its summary is gone, the entry when it is.
   */
  readWithEntry(
    messageId: string,
    entry: number,
  ): Promise<{ record: MessageRecord | null; entry: StoredEntry | null }>;
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
  /**
   * updateEntry from the entry as this writer last read or wrote it: written at once when it is
   * still what Redis holds, read again and revised otherwise (or when `known` is null). Returns
   * the entry as written, with its stored text for the writer's next change; null when the
   * record is gone.
   */
  replaceEntry(
    messageId: string,
    entry: number,
    patch: EntryPatch,
    known: StoredEntry | null,
  ): Promise<StoredEntry | null>;
  markEnqueued(messageId: string): Promise<void>;
  recordDocument(source: DocumentSource): Promise<void>;
  findDocument(documentIdentifier: string): Promise<DocumentSource | null>;
}

export type EntryPatch = Partial<Omit<AttachmentEntry, 'entry'>>;

/** An entry and the exact text Redis holds for it: what a compare-and-set compares against. */
export interface StoredEntry {
  value: AttachmentEntry;
  text: string;
}

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
 * the entry one JSON value, as every reader expects. A non-empty ARGV[4] is the channel told
 * the message id (ARGV[5]) once written: the settle notice, in the same round trip. Returns
 * 1 when written, 0 when the entry changed meanwhile, -1 when it is gone.
 */
const COMPARE_AND_SET_ENTRY = `
local current = redis.call('HGET', KEYS[1], ARGV[1])
if not current then return -1 end
if current ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
if ARGV[4] ~= '' then redis.call('PUBLISH', ARGV[4], ARGV[5]) end
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

  /**
   * Compare and set until the entry holds what `change` makes of it; the first compare is against
   * `known` when the writer has it, saving a read.
   */
  async function revise(
    messageId: string,
    entry: number,
    change: (current: AttachmentEntry) => EntryPatch | null,
    known: StoredEntry | null = null,
  ): Promise<StoredEntry | null> {
    const key = keys.message(messageId).record;
    const field = entryField(entry);
    for (let race = 0; race < MAX_ENTRY_RACES; race++) {
      const read = race === 0 && known ? known.text : await redis.hget(key, field);
      if (read === null) return null;
      const current = race === 0 && known ? known.value : (JSON.parse(read) as AttachmentEntry);
      const patch = change(current);
      if (patch === null) return { value: current, text: read };
      const next: AttachmentEntry = { ...current, ...patch, entry, updatedAt: new Date().toISOString() };
      const text = JSON.stringify(next);
      const settles = patch.state !== undefined && finalStates.has(patch.state);
      // A final state wakes the long polls of GET /v1/messages?wait= (keys.settledChannel).
      const notice = settles ? [keys.settledChannel, messageId] : ['', ''];
      const written = await redis.eval(COMPARE_AND_SET_ENTRY, 1, key, field, read, text, ...notice);
      if (written === 1) return { value: next, text };
      if (written === -1) return null;
    }
    throw new Error(`entry ${entry} of message ${messageId} kept changing under ${MAX_ENTRY_RACES} updates`);
  }

  async function reviseEntry(
    messageId: string,
    entry: number,
    change: (current: AttachmentEntry) => EntryPatch | null,
  ): Promise<AttachmentEntry | null> {
    return (await revise(messageId, entry, change))?.value ?? null;
  }

  function recordOf(fields: Record<string, string>): MessageRecord | null {
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
  }

  return {
    async read(messageId) {
      return recordOf(await redis.hgetall(keys.message(messageId).record));
    },
    async readWithEntry(messageId, entry) {
      const fields = await redis.hgetall(keys.message(messageId).record);
      const text = fields[entryField(entry)];
      return {
        record: recordOf(fields),
        entry: text === undefined ? null : { value: JSON.parse(text) as AttachmentEntry, text },
      };
    },
    readEntry,
    updateEntry: (messageId, entry, patch) => reviseEntry(messageId, entry, () => patch),
    reviseEntry,
    replaceEntry: (messageId, entry, patch, known) => revise(messageId, entry, () => patch, known),
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
