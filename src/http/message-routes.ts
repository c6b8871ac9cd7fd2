import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { MessageRecord } from '../record/message-record.ts';
import { encodeCursor, parseMessageQuery } from './message-query.ts';
import { json, refuse } from './respond.ts';
import type { MessageSearch, SearchPage } from './search-messages.ts';
import type { SettleNotifier } from './settle-notifier.ts';

/**
 * A long poll re-checks this often (ms) even when no settle announcement came: pub/sub may
 * miss one while its connection reconnects, and this bounds what that costs the waiter.
 */
const recheckMs = 5000;

export interface MessageListing {
  search: MessageSearch;
  notifier: SettleNotifier;
}

/** GET /v1/messages: one page of the search, or with `wait` a long poll for a settled match. */
export async function listMessages(
  res: ServerResponse,
  params: URLSearchParams,
  { search, notifier }: MessageListing,
): Promise<void> {
  const query = parseMessageQuery(params);
  if ('problems' in query) return refuse(res, 400, 'bad query', query.problems);
  const request = { filter: query.filter, limit: query.limit, after: query.after };
  if (query.wait === null) return json(res, 200, view(await search({ ...request, settledOnly: false })));

  // The request ends (the client gave up) or the wait is over: stop waiting either way.
  const stop = new AbortController();
  const onClose = () => stop.abort();
  res.once('close', onClose);
  const deadline = Date.now() + query.wait * 1000;
  try {
    await notifier.ready();
    for (;;) {
      // Listening before searching: a settle between the search and the wait is not missed.
      const round = new AbortController();
      const settled = notifier.next(AbortSignal.any([stop.signal, round.signal]));
      const page = await search({ ...request, settledOnly: true });
      const remaining = deadline - Date.now();
      if (page.messages.length > 0 || remaining <= 0 || stop.signal.aborted) {
        round.abort();
        if (stop.signal.aborted) return;
        if (page.messages.length > 0) return json(res, 200, view(page));
        return refuse(res, 408, `no matching message settled within ${query.wait} s`);
      }
      await Promise.race([
        settled,
        sleep(Math.min(remaining, recheckMs), undefined, { signal: round.signal }).catch(() => undefined),
      ]);
      round.abort();
    }
  } finally {
    res.off('close', onClose);
  }
}

function view(page: SearchPage): { messages: MessageRecord[]; nextCursor: string | null } {
  return {
    messages: page.messages,
    nextCursor: page.nextCursor === null ? null : encodeCursor(page.nextCursor),
  };
}
