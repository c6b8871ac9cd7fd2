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
  updateEntry(
    messageId: string,
    entry: number,
    patch: Partial<Omit<AttachmentEntry, 'entry'>>,
  ): Promise<AttachmentEntry | null>;
  markEnqueued(messageId: string): Promise<void>;
  recordDocument(source: DocumentSource): Promise<void>;
  findDocument(documentIdentifier: string): Promise<DocumentSource | null>;
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
    async updateEntry(messageId, entry, patch) {
      const current = await readEntry(messageId, entry);
      if (!current) return null;
      const next: AttachmentEntry = { ...current, ...patch, entry, updatedAt: new Date().toISOString() };
      await redis.hset(keys.message(messageId).record, entryField(entry), JSON.stringify(next));
      return next;
    },
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
