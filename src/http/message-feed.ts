import type { Logger } from '../logger.ts';
import type { IndexPosition, MessageIndex } from '../record/message-index.ts';
import type { MessageLedger } from '../record/message-ledger.ts';
import type { MessageRecord } from '../record/message-record.ts';
import type { SettleNotifier } from './settle-notifier.ts';

/**
 * New messages and settled attachments, as they happen, for GET /v1/events and the console.
 * Settles come from the ledger's announcements (settle-notifier.ts); new messages from the
 * listing index, read from its newest end while anyone listens: the producer announces
 * nothing, and one small range read per interval costs less than a message each would.
 */
export interface MessageFeed {
  /** Calls `listener` with each new or changed record until the returned function is called. */
  subscribe(listener: (record: MessageRecord) => void): Promise<() => void>;
  close(): void;
}

/** How often (ms) the index is read for new messages while anyone listens: "live" to a person. */
const newMessagePollMs = 1000;
/** New entries read per poll at most; more arriving within one interval wait for the next. */
const newMessagesPerPoll = 100;

export interface MessageFeedOptions {
  ledger: MessageLedger;
  index: MessageIndex;
  notifier: SettleNotifier;
  logger: Logger;
}

export function createMessageFeed({ ledger, index, notifier, logger }: MessageFeedOptions): MessageFeed {
  const listeners = new Set<(record: MessageRecord) => void>();
  let stopListening: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;
  /** The newest entry announced: later polls announce only what is newer. */
  let newest: IndexPosition | null = null;

  async function emit(messageId: string): Promise<void> {
    const record = await ledger.read(messageId);
    if (record === null) return;
    for (const listener of listeners) listener(record);
  }

  async function pollNewMessages(): Promise<void> {
    // page(null, …, since) reads newest first down to `since`: everything at or after the
    // newest announced entry; the entries at or before it are skipped here.
    const entries = await index.page(null, newMessagesPerPoll, newest?.receivedAt ?? null);
    const fresh = entries.filter((entry) => newest === null || isAfter(entry, newest));
    const [first] = entries;
    if (first && (newest === null || isAfter(first, newest))) newest = first;
    for (const entry of fresh.reverse()) await emit(entry.id);
  }

  function schedule(): void {
    timer = setTimeout(() => {
      pollNewMessages()
        .catch((err: unknown) => logger.warn({ err }, 'event feed: reading new messages failed'))
        .finally(() => {
          if (listeners.size > 0) schedule();
        });
    }, newMessagePollMs);
  }

  async function start(): Promise<void> {
    await notifier.ready();
    const [top] = await index.page(null, 1, null);
    newest = top ?? { id: '', receivedAt: 0 };
    stopListening = notifier.listen((messageId) => {
      emit(messageId).catch((err: unknown) => logger.warn({ err, messageId }, 'event feed: read failed'));
    });
    schedule();
    // Everyone left while this started: nothing must keep running for nobody.
    if (listeners.size === 0) stop();
  }

  function stop(): void {
    clearTimeout(timer);
    timer = undefined;
    stopListening?.();
    stopListening = undefined;
  }

  return {
    async subscribe(listener) {
      listeners.add(listener);
      if (listeners.size === 1) {
        try {
          await start();
        } catch (err) {
          listeners.delete(listener);
          stop();
          throw err;
        }
      }
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0) stop();
      };
    },
    close() {
      listeners.clear();
      stop();
    },
  };
}

/** Whether `entry` comes after `than` in receipt order (equal times order by id, as the index does). */
function isAfter(entry: IndexPosition, than: IndexPosition): boolean {
  return entry.receivedAt > than.receivedAt || (entry.receivedAt === than.receivedAt && entry.id > than.id);
}
