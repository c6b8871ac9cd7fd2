import { type MessageFilter, matchesFilter } from '../record/message-filter.ts';
import type { IndexPosition, MessageIndex } from '../record/message-index.ts';
import type { MessageLedger } from '../record/message-ledger.ts';
import { isSettled, type MessageRecord } from '../record/message-record.ts';

export interface SearchRequest {
  filter: MessageFilter;
  limit: number;
  after: IndexPosition | null;
  /** Only messages whose every attachment is in a final state (the long poll's answer). */
  settledOnly: boolean;
  /** Only records this says yes to (the console's Held page: held messages); absent: any. */
  where?: (record: MessageRecord) => boolean;
}

export interface SearchPage {
  /** Newest first. */
  messages: MessageRecord[];
  /**
   * Where the next page starts; null when the index holds nothing older. A page may hold
   * fewer than `limit` messages and still have a next one: the scan stopped at its bound.
   */
  nextCursor: IndexPosition | null;
}

/**
 * Index entries one request reads at most: a filter that matches little must not make one
 * request read every record the gateway keeps. The client pages on with nextCursor.
 */
export const scanBound = 1000;
/** Records read at once: one round trip's worth, without holding a page of records twice over. */
const batchSize = 100;

/**
 * GET /v1/messages: walks the index newest first, reads each record, keeps the matches.
 * Entries whose record has expired are dropped from the index as they are met.
 */
export function createMessageSearch(ledger: MessageLedger, index: MessageIndex) {
  return async function search(request: SearchRequest): Promise<SearchPage> {
    const messages: MessageRecord[] = [];
    let position = request.after;
    let scanned = 0;
    while (scanned < scanBound) {
      const wanted = Math.min(batchSize, scanBound - scanned);
      const entries = await index.page(position, wanted, request.filter.since);
      const records = await Promise.all(entries.map((entry) => ledger.read(entry.id)));
      const gone: string[] = [];
      for (const [i, entry] of entries.entries()) {
        scanned += 1;
        position = entry;
        const record = records[i];
        if (record === null || record === undefined) {
          gone.push(entry.id);
          continue;
        }
        if (!matchesFilter(record, request.filter)) continue;
        if (request.settledOnly && !isSettled(record)) continue;
        if (request.where && !request.where(record)) continue;
        messages.push(record);
        if (messages.length === request.limit) {
          await index.remove(gone);
          return { messages, nextCursor: entry };
        }
      }
      await index.remove(gone);
      if (entries.length < wanted) return { messages, nextCursor: null };
    }
    return { messages, nextCursor: position };
  };
}

export type MessageSearch = ReturnType<typeof createMessageSearch>;
