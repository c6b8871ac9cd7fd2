import { z } from 'zod/mini';
import { englishIssueMessages } from '../english-issues.ts';
import type { MessageFilter } from '../record/message-filter.ts';
import type { IndexPosition } from '../record/message-index.ts';
import { attachmentStates } from '../record/message-record.ts';

/** The query of GET /v1/messages, validated. */
export interface MessageQuery {
  filter: MessageFilter;
  /** Messages per page. */
  limit: number;
  /** Continue after this entry (the previous page's nextCursor); null: from the newest. */
  after: IndexPosition | null;
  /** Seconds to long-poll for a settled match; null: answer at once. */
  wait: number | null;
}

/** Messages per page unless `limit` says otherwise, and the most a page holds. */
export const defaultLimit = 20;
export const maxLimit = 100;
/** Seconds a long poll may be asked to wait: long enough for an upload, short of proxy timeouts. */
export const maxWaitSeconds = 120;

const text = z.string().check(z.trim(), z.minLength(1, { error: 'must not be empty' }), z.maxLength(500));
const querySchema = z.strictObject({
  from: z.optional(text),
  to: z.optional(text),
  workspace: z.optional(text),
  state: z.optional(z.enum(attachmentStates, { error: `expected one of ${attachmentStates.join(', ')}` })),
  q: z.optional(text),
  since: z.optional(
    z.iso.datetime({ offset: true, error: 'expected an ISO 8601 time, e.g. 2024-05-01T12:00:00Z' }),
  ),
  limit: z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(maxLimit)), defaultLimit),
  cursor: z.optional(z.string()),
  wait: z.optional(z.coerce.number().check(z.int(), z.gte(1), z.lte(maxWaitSeconds))),
});

/** The query, or every problem in it (a parameter given twice, an unknown one, a bad value). */
export function parseMessageQuery(params: URLSearchParams): MessageQuery | { problems: string[] } {
  const problems: string[] = [];
  const raw: Record<string, string> = {};
  for (const [name, value] of params) {
    if (name in raw) problems.push(`${name}: given more than once`);
    raw[name] = value;
  }
  const parsed = querySchema.safeParse(raw, { error: englishIssueMessages });
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const name = issue.path.join('.');
      problems.push(
        issue.code === 'unrecognized_keys'
          ? `unknown parameter(s): ${issue.keys.join(', ')}`
          : `${name}: ${issue.message}`,
      );
    }
  }
  const after = parsed.success && parsed.data.cursor !== undefined ? decodeCursor(parsed.data.cursor) : null;
  if (parsed.success && parsed.data.cursor !== undefined && after === null) {
    problems.push('cursor: not a cursor this API gave (use nextCursor of the previous page)');
  }
  if (!parsed.success || problems.length > 0) return { problems };
  const query = parsed.data;
  return {
    filter: {
      from: query.from ?? null,
      to: query.to ?? null,
      workspace: query.workspace ?? null,
      state: query.state ?? null,
      q: query.q ?? null,
      since: query.since === undefined ? null : Date.parse(query.since),
    },
    limit: query.limit,
    after,
    wait: query.wait ?? null,
  };
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
