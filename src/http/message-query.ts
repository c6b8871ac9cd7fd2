import * as z from 'zod/mini';
import { englishIssueMessages } from '../english-issues.ts';
import type { MessageFilter } from '../record/message-filter.ts';
import type { IndexPosition } from '../record/message-index.ts';
import { attachmentStates } from '../record/message-record.ts';
import { cursorParameter, limitParameter, textParameter, timeParameter } from './query-parameters.ts';
import { queryProblems } from './query-problems.ts';

/** Seconds a long poll may be asked to wait: long enough for an upload, short of proxy timeouts. */
export const maxWaitSeconds = 120;

/**
 * The parameters of GET /v1/messages, each once. The filters are those of GET /v1/events too;
 * GET /v1/openapi.json documents both from this schema.
 */
export const messageQueryParameters = z.strictObject({
  from: textParameter('Header From or envelope sender (MAIL FROM) contains this, without case'),
  to: textParameter('Any envelope recipient contains this, without case'),
  workspace: textParameter('A workspace the message went to (exact identifier)'),
  state: z.optional(
    z
      .enum(attachmentStates, { error: `expected one of ${attachmentStates.join(', ')}` })
      .check(z.describe('Any attachment in this state')),
  ),
  q: textParameter("Subject or any attachment's file name (sent or original) contains this, without case"),
  since: timeParameter('Received at or after this time (ISO 8601)'),
  limit: limitParameter('Messages per page'),
  cursor: cursorParameter(decodeCursor),
  wait: z.optional(
    z.coerce
      .number()
      .check(
        z.int(),
        z.gte(1),
        z.lte(maxWaitSeconds),
        z.describe(
          'Long poll: answer as soon as a match has every attachment in a final state (uploaded, rejected, ' +
            'failed, skipped), listing only such messages; 408 when none does within this many seconds',
        ),
      ),
  ),
});

/** The query of GET /v1/messages, validated: the filter, the page and the long poll. */
const messageQuerySchema = z.pipe(
  messageQueryParameters,
  z.transform((query) => ({
    filter: {
      from: query.from ?? null,
      to: query.to ?? null,
      workspace: query.workspace ?? null,
      state: query.state ?? null,
      q: query.q ?? null,
      /** Milliseconds since the epoch. */
      since: query.since === undefined ? null : Date.parse(query.since),
    } satisfies MessageFilter,
    /** Messages per page. */
    limit: query.limit,
    /** Continue after this entry (the previous page's nextCursor); null: from the newest. */
    after: query.cursor ?? null,
    /** Seconds to long-poll for a settled match; null: answer at once. */
    wait: query.wait ?? null,
  })),
);

export type MessageQuery = z.output<typeof messageQuerySchema>;

/** The query, or every problem in it (a parameter given twice, an unknown one, a bad value). */
export function parseMessageQuery(params: URLSearchParams): MessageQuery | { problems: string[] } {
  const problems: string[] = [];
  const raw: Record<string, string> = {};
  for (const [name, value] of params) {
    if (name in raw) problems.push(`${name}: given more than once`);
    raw[name] = value;
  }
  const parsed = messageQuerySchema.safeParse(raw, { error: englishIssueMessages });
  if (!parsed.success) problems.push(...queryProblems(parsed.error.issues));
  if (!parsed.success || problems.length > 0) return { problems };
  return parsed.data;
}

/** An opaque token for the position after which the next page starts. */
export function encodeCursor(position: IndexPosition): string {
  return Buffer.from(`${position.receivedAt}.${position.id}`, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): IndexPosition | null {
  const match = /^(\d{1,16})\.([0-9a-z]{1,64})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match?.[1] || !match[2]) return null;
  return { receivedAt: Number(match[1]), id: match[2] };
}
