import type { SplitterChunk, SplitterOptions } from '@zone-eu/mailsplit';
import { RefusalError } from '../errors.ts';

/**
 * The bounds of the MIME walk, and the refusals that name them. Each one bounds what one
 * message costs: the walk holds no part, but mailsplit's work per line grows with the
 * nesting, and the record grows with the parts.
 */
export interface WalkLimits {
  /** How many message/rfc822 levels are walked into; a deeper one refuses the message. */
  maxDepth: number;
  /** The most leaves (bodies included) a message may have. */
  maxParts: number;
  /** The largest header block of one MIME node, in bytes as mailsplit counts them (a line costs at least 64). */
  maxHeaderBytes: number;
  /** The largest decoded candidate part, in bytes. */
  maxPartSize: number;
}

type MimeNode = Extract<SplitterChunk, { type: 'node' }>;

/**
 * The gateway's maxHeaderBytes: 64 KiB as mailsplit counts them, a sixteenth of mailsplit's
 * own 1 MiB. Clients write a few KiB; mailsplit holds a header block whole until it ends.
 */
export const MAX_HEADER_BYTES = 64 * 1024;

/**
 * How deeply multiparts may nest inside one message. Clients nest three or four levels
 * (mixed > related > alternative); mailsplit compares every body line with the boundary
 * of each open ancestor, so the nesting is what one line costs.
 */
const MAX_MULTIPART_NESTING = 32;

/** The limits mailsplit enforces itself, reported as EMAXLEN (see asRefusal). */
export function splitterLimits(limits: WalkLimits): Pick<SplitterOptions, 'maxHeadSize' | 'maxChildNodes'> {
  return {
    maxHeadSize: limits.maxHeaderBytes,
    // A tree whose containers each hold two or more parts has fewer nodes than twice its leaves.
    maxChildNodes: 2 * limits.maxParts + 1,
  };
}

export function checkNesting(node: MimeNode): void {
  let nesting = 0;
  for (let parent = node.parentNode; parent !== false; parent = parent.parentNode) {
    nesting += 1;
    if (nesting > MAX_MULTIPART_NESTING) {
      throw new RefusalError(
        'MIME_LIMIT',
        `multiparts are nested deeper than the ${MAX_MULTIPART_NESTING} levels this server reads`,
      );
    }
  }
}

/** An attached message is about to be walked at `depth`: refuse one deeper than maxDepth. */
export function checkDepth(depth: number, limits: WalkLimits): void {
  if (depth <= limits.maxDepth) return;
  const levels = `${limits.maxDepth} ${limits.maxDepth === 1 ? 'level' : 'levels'}`;
  throw new RefusalError(
    'MIME_LIMIT',
    `attached messages are nested more than ${levels} deep, deeper than this server reads`,
  );
}

/** The walk has met its `leafCount`th leaf: refuse one past maxParts. */
export function checkPartCount(leafCount: number, limits: WalkLimits): void {
  if (leafCount <= limits.maxParts) return;
  throw new RefusalError(
    'MIME_LIMIT',
    `the message has more than the ${limits.maxParts} parts this server reads`,
  );
}

/** The refusal of a header block over `maxHeaderBytes`, as mailsplit (and header-block-meter.ts) count them. */
export function headerBlockTooLarge(maxHeaderBytes: number): RefusalError {
  return new RefusalError(
    'MIME_LIMIT',
    // mailsplit counts a header line as at least 64 bytes: say so, so that a header of many
    // short lines is not told it is larger than it is.
    `a MIME header block is larger than the ${maxHeaderBytes} bytes this server reads (a line counts at least 64)`,
  );
}

/**
 * mailsplit reports both of its limits as an `EMAXLEN` error; name the limit in the reply.
 * Anything else (the source failed, the store failed) passes through unchanged.
 */
export function asRefusal(err: Error, limits: WalkLimits): Error {
  if ((err as Error & { code?: unknown }).code !== 'EMAXLEN') return err;
  return /header/i.test(err.message)
    ? headerBlockTooLarge(limits.maxHeaderBytes)
    : new RefusalError(
        'MIME_LIMIT',
        `the message has more MIME parts than the ${limits.maxParts} this server reads`,
      );
}
