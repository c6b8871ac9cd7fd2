import type { ServerResponse } from 'node:http';
import { matchesFilter } from '../record/message-filter.ts';
import type { MessageFeed } from './message-feed.ts';
import { parseMessageQuery } from './message-query.ts';
import { refuse } from './respond.ts';

/**
 * A comment line this often (ms) keeps an idle stream open through proxies that cut silent
 * connections (nginx's proxy_read_timeout defaults to 60 s).
 */
const heartbeatMs = 20_000;
/** What an EventSource waits (ms) before reconnecting after the stream ends. */
const reconnectMs = 2000;
/**
 * Bytes a client may leave unread in this process's buffer: past it the client is dropped
 * (an EventSource reconnects), rather than every later record held for one that stalled.
 */
export const unreadBytesBound = 1024 * 1024;

/**
 * GET /v1/events: server-sent events, one `message` event per new or changed message record
 * (accepted, or an attachment settled), its data the record as GET /v1/messages/{id} gives it.
 * The filters of GET /v1/messages apply; paging and waiting do not.
 */
export async function streamEvents(res: ServerResponse, params: URLSearchParams, feed: MessageFeed) {
  const query = parseMessageQuery(params);
  const paging = ['limit', 'cursor', 'wait'].filter((name) => params.has(name));
  if ('problems' in query || paging.length > 0) {
    const problems = 'problems' in query ? query.problems : [];
    return refuse(res, 400, 'bad query', [
      ...problems,
      ...paging.map((name) => `${name}: not a filter; events stream as they happen`),
    ]);
  }
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    // nginx buffers responses by default, which would hold events back.
    'x-accel-buffering': 'no',
  });
  res.write(`retry: ${reconnectMs}\n\n`);
  const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), heartbeatMs);
  const unsubscribe = await feed
    .subscribe((record) => {
      if (!matchesFilter(record, query.filter)) return;
      if (res.destroyed) return;
      res.write(`event: message\nid: ${record.id}\ndata: ${JSON.stringify(record)}\n\n`);
      // Destroyed, not ended: an end would wait behind the unread bytes, holding them.
      if (res.writableLength > unreadBytesBound) res.destroy();
    })
    .catch((err: unknown) => {
      clearInterval(heartbeat);
      res.destroy();
      throw err;
    });
  const end = () => {
    clearInterval(heartbeat);
    unsubscribe();
  };
  if (res.destroyed) return end();
  res.once('close', end);
  // Only now: a client that waits for this line hears every record announced after it.
  res.write(': listening\n\n');
}
