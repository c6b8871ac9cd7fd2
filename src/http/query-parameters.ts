import * as z from 'zod/mini';

/**
 * The shapes the list queries share (GET /v1/messages, /v1/events, /v1/refusals), each with
 * the description GET /v1/openapi.json shows for it.
 */

/** Items per page unless `limit` says otherwise, and the most a page holds. */
const defaultLimit = 20;
const maxLimit = 100;

const cursorProblem = 'not a cursor this API gave (use nextCursor of the previous page)';

/** A text filter: trimmed, not empty, at most 500 characters. */
export const textParameter = (description: string) =>
  z.optional(
    z
      .string()
      .check(
        z.trim(),
        z.minLength(1, { error: 'must not be empty' }),
        z.maxLength(500),
        z.describe(description),
      ),
  );

/** An ISO 8601 time with its offset. */
export const timeParameter = (description: string) =>
  z.optional(
    z.iso
      .datetime({ offset: true, error: 'expected an ISO 8601 time, e.g. 2024-05-01T12:00:00Z' })
      .check(z.describe(description)),
  );

/** The page size, `defaultLimit` when not given. */
export const limitParameter = (description: string) =>
  z._default(
    z.coerce.number().check(z.int(), z.gte(1), z.lte(maxLimit), z.describe(description)),
    defaultLimit,
  );

/** The previous page's nextCursor, read back by `decode` (null: not one this API gave). */
export const cursorParameter = <T>(decode: (cursor: string) => T | null) =>
  z.optional(
    z.pipe(
      z.string().check(z.describe('nextCursor of the previous page')),
      z.transform((cursor, context) => {
        const position = decode(cursor);
        if (position === null) context.issues.push({ code: 'custom', message: cursorProblem, input: cursor });
        return position;
      }),
    ),
  );
