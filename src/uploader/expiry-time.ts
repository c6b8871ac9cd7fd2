import * as z from 'zod/mini';

/**
 * The `expiryTime` form field (docs/parsing-api.md, "Uploading a document": an ISO 8601 date-time
 * at which the service deletes the document). The configuration takes either that date-time, sent
 * as written, or a duration (`30d`, `12h`, `90m`, `2w`) counted from the moment the gateway
 * received the message, so each document lives as long as the one before it however long it waited
 * in the queue.
 */

export type ExpiryTime = { kind: 'instant'; iso: string } | { kind: 'duration'; ms: number };

const MINUTE_MS = 60_000;
const UNIT_MS = { m: MINUTE_MS, h: 60 * MINUTE_MS, d: 24 * 60 * MINUTE_MS, w: 7 * 24 * 60 * MINUTE_MS };

/**
 * Longest duration, in milliseconds: 100 years. Anything longer is a typo, and a far larger
 * one would overflow the Date range when added to the receipt time.
 */
export const MAX_EXPIRY_DURATION_MS = 100 * 365 * UNIT_MS.d;

const DURATION = /^([1-9][0-9]{0,8})([mhdw])$/;

/**
 * A date-time with a time zone (`Z` or `±hh:mm`): without one the instant depends on the
 * service's clock settings, which is no way to schedule a deletion.
 */
const isoDateTime = z.iso.datetime({ offset: true });

export const EXPIRY_TIME_EXPECTED =
  'expected an ISO 8601 date-time with a time zone (2030-01-31T00:00:00Z) or a duration after receipt: <n>m, <n>h, <n>d or <n>w (30d)';

/** The configured text as an instant or a duration, or the problem with it. */
export function parseExpiryTime(
  text: string,
): { ok: true; value: ExpiryTime } | { ok: false; problem: string } {
  const trimmed = text.trim();
  const duration = DURATION.exec(trimmed);
  if (duration) {
    const [, amount = '0', unit = 'm'] = duration;
    const ms = Number(amount) * UNIT_MS[unit as keyof typeof UNIT_MS];
    if (ms > MAX_EXPIRY_DURATION_MS) {
      return { ok: false, problem: `${JSON.stringify(text)} is more than 100 years` };
    }
    return { ok: true, value: { kind: 'duration', ms } };
  }
  if (isoDateTime.safeParse(trimmed).success) return { ok: true, value: { kind: 'instant', iso: trimmed } };
  return { ok: false, problem: `${EXPIRY_TIME_EXPECTED}, got ${JSON.stringify(text)}` };
}

/** The value of the form field for a message received at `receivedAt`. */
export function resolveExpiryTime(text: string, receivedAt: Date): string {
  const parsed = parseExpiryTime(text);
  if (!parsed.ok) throw new Error(`invalid expiryTime: ${parsed.problem}`);
  const { value } = parsed;
  return value.kind === 'instant' ? value.iso : new Date(receivedAt.getTime() + value.ms).toISOString();
}
