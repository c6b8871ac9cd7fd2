import { randomFillSync } from 'node:crypto';

/** Random bits for ids, drawn from the system's generator 256 ids at a time. */
const pool = Buffer.alloc(6 * 256);
let drawn = pool.length;

/** 48 random bits, as a number (exact: under 2^53). */
function random48(): number {
  if (drawn === pool.length) {
    randomFillSync(pool);
    drawn = 0;
  }
  const value = pool.readUIntBE(drawn, 6);
  drawn += 6;
  return value;
}

/**
 * The id of an accepted message, given in the 250 reply and used in URLs and Redis hash
 * tags: time-ordered (base-36 milliseconds) so operators can sort by it, then 48 random bits.
 * Only [0-9a-z], so it never holds the `{`, `}` or `:` that key syntax gives meaning to.
 */
export function newMessageId(now: number = Date.now()): string {
  return now.toString(36).padStart(9, '0') + random48().toString(36).padStart(10, '0');
}
