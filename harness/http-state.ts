import { setTimeout as sleep } from 'node:timers/promises';
import type { AttachmentEntry, MessageRecord } from '../src/record/message-record.ts';

/**
 * Waiting on what the gateway (or the mock API) answers over HTTP, for tests that cannot
 * subscribe to an event: a daemon in another process, a connection's recovery. Each wait
 * reads the state again until it holds, and fails naming the state it waited for.
 */

/** Milliseconds between two reads: a few dozen requests per second at most. */
const POLL_INTERVAL_MS = 50;
/**
 * Milliseconds after which a wait fails instead of hanging until the test's own timeout,
 * with the last state it read. A bound, not a wait: the states tests await come in seconds.
 */
const GIVE_UP_AFTER_MS = 30_000;

/** Resolves with the first value `read` gives that `holds` accepts. */
export async function until<T>(
  what: string,
  read: () => Promise<T>,
  holds: (value: T) => boolean,
): Promise<T> {
  const deadline = Date.now() + GIVE_UP_AFTER_MS;
  for (;;) {
    const value = await read();
    if (holds(value)) return value;
    if (Date.now() > deadline) {
      throw new Error(`gave up waiting for ${what}; last state: ${JSON.stringify(value)}`);
    }
    await sleep(POLL_INTERVAL_MS);
  }
}

export interface JsonAnswer<T> {
  status: number;
  body: T;
}

/** GET a JSON resource; a connection refused reads as status 0 (a server not yet or no longer up). */
export async function getJson<T>(url: string, token?: string): Promise<JsonAnswer<T | undefined>> {
  try {
    const response = await fetch(url, token ? { headers: { authorization: `Bearer ${token}` } } : {});
    return { status: response.status, body: (await response.json()) as T };
  } catch {
    return { status: 0, body: undefined };
  }
}

/** An attachment entry's states that no worker changes any more. */
const settledStates: ReadonlySet<AttachmentEntry['state']> = new Set([
  'uploaded',
  'rejected',
  'failed',
  'skipped',
]);

/** Resolves with the entry of GET /v1/messages/{id} once `holds` accepts it. */
export async function entryWhen(
  httpUrl: string,
  messageId: string,
  entry: number,
  what: string,
  holds: (entry: AttachmentEntry) => boolean,
): Promise<AttachmentEntry> {
  const answer = await until(
    `message ${messageId} entry ${entry} ${what}`,
    () => getJson<MessageRecord>(`${httpUrl}/v1/messages/${messageId}`),
    ({ body }) => {
      const found = body?.attachments?.[entry];
      return found !== undefined && holds(found);
    },
  );
  const found = answer.body?.attachments?.[entry];
  if (!found) throw new Error(`message ${messageId} has no entry ${entry}`);
  return found;
}

/** Resolves with the entry once no worker will change it: uploaded, rejected, failed or skipped. */
export function entrySettled(httpUrl: string, messageId: string, entry: number): Promise<AttachmentEntry> {
  return entryWhen(httpUrl, messageId, entry, 'settled', ({ state }) => settledStates.has(state));
}

/** Resolves with /readyz's answer once its status is `status` (200 ready, 503 not). */
export function readyzAnswers<T = Record<string, unknown>>(
  httpUrl: string,
  status: 200 | 503,
  token?: string,
): Promise<JsonAnswer<T | undefined>> {
  return until(
    `/readyz to answer ${status}`,
    () => getJson<T>(`${httpUrl}/readyz`, token),
    (answer) => answer.status === status,
  );
}
