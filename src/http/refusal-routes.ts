import type { ServerResponse } from 'node:http';
import * as z from 'zod/mini';
import { englishIssueMessages } from '../english-issues.ts';
import { type RefusalFilter, type RefusalReader, refusalStages } from '../record/refusal-log.ts';
import { cursorParameter, limitParameter, textParameter, timeParameter } from './query-parameters.ts';
import { queryProblems } from './query-problems.ts';
import { json, refuse } from './respond.ts';

/** The parameters of GET /v1/refusals; GET /v1/openapi.json documents them from this schema. */
export const refusalQueryParameters = z.strictObject({
  from: textParameter('Envelope sender (MAIL FROM) or header From contains this, without case'),
  to: textParameter('A refused recipient contains this, without case'),
  client: textParameter('The client address contains this'),
  stage: z.optional(
    z
      .enum(refusalStages, { error: `expected one of ${refusalStages.join(', ')}` })
      .check(z.describe('The SMTP command refused: connect, mail, rcpt or data')),
  ),
  since: timeParameter('Refused at or after this time (ISO 8601)'),
  limit: limitParameter('Refusals per page'),
  cursor: cursorParameter(decodeRefusalCursor),
});

export interface RefusalQuery {
  filter: RefusalFilter;
  limit: number;
  /** Continue after this entry id; null: from the newest. */
  after: string | null;
}

/** The query, or every problem in it (a parameter given twice, an unknown one, a bad value). */
export function parseRefusalQuery(params: URLSearchParams): RefusalQuery | { problems: string[] } {
  const problems: string[] = [];
  const raw: Record<string, string> = {};
  for (const [name, value] of params) {
    if (name in raw) problems.push(`${name}: given more than once`);
    raw[name] = value;
  }
  const parsed = refusalQueryParameters.safeParse(raw, { error: englishIssueMessages });
  if (!parsed.success) problems.push(...queryProblems(parsed.error.issues));
  if (!parsed.success || problems.length > 0) return { problems };
  const query = parsed.data;
  return {
    filter: {
      from: query.from ?? null,
      to: query.to ?? null,
      client: query.client ?? null,
      stage: query.stage ?? null,
      since: query.since === undefined ? null : Date.parse(query.since),
    },
    limit: query.limit,
    after: query.cursor ?? null,
  };
}

/** An opaque token for the entry after which the next page starts. */
export function encodeRefusalCursor(id: string): string {
  return Buffer.from(id, 'utf8').toString('base64url');
}

export function decodeRefusalCursor(cursor: string): string | null {
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  return /^\d{1,16}-\d{1,16}$/.test(id) ? id : null;
}

/** GET /v1/refusals: a page of the refusal log, newest first. */
export async function listRefusals(
  res: ServerResponse,
  params: URLSearchParams,
  read: RefusalReader,
): Promise<void> {
  const query = parseRefusalQuery(params);
  if ('problems' in query) return refuse(res, 400, 'bad query', query.problems);
  const page = await read(query.filter, query.limit, query.after);
  json(res, 200, {
    refusals: page.refusals,
    nextCursor: page.nextCursor === null ? null : encodeRefusalCursor(page.nextCursor),
  });
}
