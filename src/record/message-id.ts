import { randomBytes } from 'node:crypto';

/**
 * The id of an accepted message, given in the 250 reply and used in URLs and Redis hash
 * tags: time-ordered (base-36 milliseconds) so operators can sort by it, then 48 random bits.
 * Only [0-9a-z], so it never holds the `{`, `}` or `:` that key syntax gives meaning to.
 */
export function newMessageId(now: number = Date.now()): string {
  return (
    now.toString(36).padStart(9, '0') +
    BigInt(`0x${randomBytes(6).toString('hex')}`)
      .toString(36)
      .padStart(10, '0')
  );
}
