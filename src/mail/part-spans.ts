import type { LeafPart } from './leaf-part.ts';
import type { PartPurpose, PartStore, PartWriter } from './part-store.ts';

/**
 * Where the parts of a walk over the raw copy (WalkOptions.spansOfRaw) lie in it. The walk
 * counts the bytes mailsplit hands on (headers, bodies and boundaries); a document leaf whose
 * level of the message is a span of the raw copy is not written but recorded as
 * `raw[start, end)` (PartSpan), decoded from the raw copy when it is uploaded.
 */

/**
 * Where the leaf being read lies in the raw copy: `start` its first body byte (null when
 * this level of the message is not a span of the raw copy), `written` the body bytes handed
 * to its decoder so far.
 */
export interface LeafPosition {
  readonly start: number | null;
  written: number;
}

/** A leaf whose headers end `offset` bytes into a level that starts at `base` of the raw copy (null: not a span of it). */
export function leafPosition(base: number | null, offset: number): LeafPosition {
  return { start: base === null ? null : base + offset, written: 0 };
}

/**
 * Spans are counted from what mailsplit hands on; a count that does not come to the input
 * means they are wrong, and a message stored with wrong spans would lose its documents.
 * `whose`: the message's, or an attached message's.
 */
export function checkCounted(walked: number, received: number, whose: string): void {
  if (walked !== received)
    throw new Error(
      `the MIME walk counted ${walked} of ${whose} ${received} bytes; its parts cannot be located`,
    );
}

export interface LeafSpans {
  /** The store the leaf's collector writes to. */
  readonly store: PartStore;
  /** The leaf has been read: record its span when it was a document kept. */
  record(part: LeafPart): void;
}

/**
 * The store one leaf of a walk over the raw copy sees: a document is not written (its span
 * is recorded once it ends), a container is, to be opened after DATA.
 */
export function leafSpans(store: PartStore, position: LeafPosition, encoding: string): LeafSpans {
  let spanned = false;
  return {
    store: {
      openPart(index: number, purpose: PartPurpose): PartWriter {
        if (purpose === 'container') return store.openPart(index, purpose);
        spanned = true;
        return { write: async () => undefined, end: async () => undefined, discard: async () => undefined };
      },
      recordSpan: (index, span) => store.recordSpan(index, span),
    },
    record(part) {
      // Every body byte has passed the decoder by now: the span is complete.
      if (spanned && part.stored && position.start !== null) {
        const start = position.start;
        store.recordSpan(part.index, { start, end: start + position.written, encoding });
      }
    },
  };
}
