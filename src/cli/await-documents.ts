import { setTimeout as sleep } from 'node:timers/promises';
import * as z from 'zod/mini';

/**
 * `ingest-gateway send --wait`: reads the gateway's record of the message it queued
 * (GET {http}/v1/messages/{id}) until every attachment is in a final state, so the sender
 * learns the document identifiers the service gave, or why there are none. When the
 * workspace tracks completion, an uploaded document is waited for until its parse outcome
 * is known (`completion` no longer `polling`).
 */

/** The states after which an attachment changes no more (the README's record: `state`). */
const finalStates = new Set(['uploaded', 'rejected', 'failed', 'skipped']);

/** Between two reads of the record: uploads take a second or more, so this costs little wait. */
const pollIntervalMs = 250;

/** The part of the record `--wait` reads; the rest of it is the gateway's business. */
const recordSchema = z.object({
  attachments: z.array(
    z.object({
      fileName: z.string(),
      workspace: z.nullable(z.string()),
      state: z.string(),
      reason: z.nullable(z.string()),
      documentIdentifier: z.nullable(z.string()),
      completion: z.optional(z.nullable(z.object({ state: z.string(), reason: z.nullable(z.string()) }))),
    }),
  ),
});

export type AttachmentOutcome = z.infer<typeof recordSchema>['attachments'][number];

export interface AwaitDocumentsOptions {
  /** The gateway's HTTP API, e.g. http://127.0.0.1:8025. */
  httpUrl: string;
  queueId: string;
  /** http.token, when the API asks for one. */
  token: string | undefined;
  timeoutMs: number;
}

export interface AwaitedDocuments {
  /** Whether every attachment reached a final state before the timeout. */
  settled: boolean;
  attachments: AttachmentOutcome[];
}

/** The record could not be read: the reason says what to fix (the URL, the token). */
export class RecordUnavailableError extends Error {
  override readonly name = 'RecordUnavailableError';
}

export async function awaitDocuments(options: AwaitDocumentsOptions): Promise<AwaitedDocuments> {
  const url = `${options.httpUrl}/v1/messages/${options.queueId}`;
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    const attachments = await readAttachments(url, options.token);
    const settled = attachments.every(
      (attachment) => finalStates.has(attachment.state) && attachment.completion?.state !== 'polling',
    );
    if (settled || Date.now() + pollIntervalMs > deadline) return { settled, attachments };
    await sleep(pollIntervalMs);
  }
}

async function readAttachments(url: string, token: string | undefined): Promise<AttachmentOutcome[]> {
  let response: Response;
  try {
    response = await fetch(url, token ? { headers: { authorization: `Bearer ${token}` } } : {});
  } catch (caught) {
    const cause =
      caught instanceof Error && caught.cause instanceof Error ? caught.cause.message : String(caught);
    throw new RecordUnavailableError(
      `cannot read ${url}: ${cause}; give the gateway's HTTP API with --http URL`,
    );
  }
  if (response.status === 401) {
    throw new RecordUnavailableError(`${url} answered 401: set HTTP_TOKEN to the gateway's http.token`);
  }
  if (response.status !== 200) {
    throw new RecordUnavailableError(`${url} answered ${response.status}: ${await response.text()}`);
  }
  const parsed = recordSchema.safeParse(await response.json().catch(() => undefined));
  if (!parsed.success) throw new RecordUnavailableError(`${url} did not answer with a message record`);
  return parsed.data.attachments;
}

/**
 * What became of an attachment, in one word: its state, or once completion tracking knows
 * it, `parsed` or `parse_failed`; while that is still awaited, `uploaded`.
 */
export function outcomeWord(attachment: AttachmentOutcome): string {
  const completion = attachment.completion?.state;
  if (completion === 'ready') return 'parsed';
  if (completion === 'failed') return 'parse_failed';
  return attachment.state;
}
