import type { RefusalError } from '../errors.ts';
import { headerBlockTooLarge, MAX_HEADER_BYTES } from './walk-limits.ts';

/**
 * The top-level header block measured as the MIME walk measures it (mailsplit's MimeNode:
 * each line with its line ending, at least HEADER_LINE_MIN_COST bytes; the blank line that
 * ends the block its own bytes), as the bytes stream past: incremental, constant memory, one
 * `indexOf` per line. What reads the raw message beside the walk (sender authentication, which
 * holds the header block whole until it ends) stops where the walk stops, instead of wherever
 * the walk has got to when its refusal arrives.
 */

/** mailsplit's least cost of one header line (lib/mime-node.js, HEADER_LINE_MIN_COST). */
const LINE_MIN_COST = 64;

export interface HeaderBlockMeter {
  /**
   * Measures the next chunk of the message; returns the walk's refusal (550 5.6.0) once the
   * header block costs more than the cap, a line not yet ended counted by its bytes, and every
   * time after.
   */
  push(chunk: Buffer): RefusalError | null;
}

export function createHeaderBlockMeter(maxHeaderBytes = MAX_HEADER_BYTES): HeaderBlockMeter {
  /** Cost of the lines ended so far. */
  let cost = 0;
  /** Bytes of the line not yet ended. */
  let pending = 0;
  /** The first byte of the line not yet ended; -1 before it has one. */
  let first = -1;
  let ended = false;
  let refusal: RefusalError | null = null;

  return {
    push(chunk) {
      if (refusal || ended) return refusal;
      let start = 0;
      while (start < chunk.length) {
        if (pending === 0) first = chunk[start] ?? -1;
        const lineEnd = chunk.indexOf(0x0a, start);
        if (lineEnd === -1) {
          pending += chunk.length - start;
          break;
        }
        const length = pending + lineEnd + 1 - start;
        pending = 0;
        const blank = length === 1 || (length === 2 && first === 0x0d);
        cost += blank ? length : Math.max(length, LINE_MIN_COST);
        if (blank) {
          ended = cost <= maxHeaderBytes;
          break;
        }
        if (cost > maxHeaderBytes) break;
        start = lineEnd + 1;
      }
      // A line not yet ended counts its bytes only: it may still be the blank line, and the
      // walk never counts more for it, so the meter is never stricter than the walk.
      if (cost + pending > maxHeaderBytes) refusal = headerBlockTooLarge(maxHeaderBytes);
      return refusal;
    },
  };
}
