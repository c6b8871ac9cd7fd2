import { z } from 'zod';
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

const text = z.string().trim().min(1, { error: 'must not be empty' }).max(500);
const querySchema = z.strictObject({
  from: text.optional(),
  to: text.optional(),
  workspace: text.optional(),
  state: z.enum(attachmentStates, { error: `expected one of ${attachmentStates.join(', ')}` }).optional(),
  q: text.optional(),
  since: z.iso
    .datetime({ offset: true, error: 'expected an ISO 8601 time, e.g. 2024-05-01T12:00:00Z' })
    .optional(),
  limit: z.coerce.number().int().min(1).max(maxLimit).default(defaultLimit),
  cursor: z.string().optional(),
  wait: z.coerce.number().int().min(1).max(maxWaitSeconds).optional(),
});

/** The query, or every problem in it (a parameter given twice, an unknown one, a bad value). */
export function parseMessageQuery(params: URLSearchParams): MessageQuery | { problems: string[] } {
  const problems: string[] = [];
  const raw: Record<string, string> = {};
  for (const [name, value] of params) {
    if (name in raw) problems.push(`${name}: given more than once`);
    raw[name] = value;
  }
  const parsed = querySchema.safeParse(raw);
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
