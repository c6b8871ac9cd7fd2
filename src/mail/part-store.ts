/**
 * Where the MIME walk puts the decoded bytes of the parts it keeps. The walk never holds a
 * whole part: it writes each decoded chunk as it comes and waits for the store before it
 * reads on, so a slow store slows the SMTP client down instead of filling memory.
 *
 * The Redis implementation lives in src/store; tests use harness/mail-memory-store.ts.
 * The walk opens a writer only for a candidate whose type it recognised; a part that is
 * stored and ended but later not selected (an image the HTML body shows, a refused message)
 * is the store owner's to release.
 */
export interface PartWriter {
  /** Resolves when the store can take more: the walker awaits it (backpressure). */
  write(chunk: Buffer): Promise<void>;
  /** All bytes written; resolves when they are stored. */
  end(): Promise<void>;
  /** The part is not wanted after all (over a limit, walk failed): forget what was written. */
  discard(): Promise<void>;
}

/**
 * Where a part's bytes lie in the raw message as received: `raw[start, end)` is its body as
 * transfer-encoded, and decoding it with `encoding` (transfer-decoder.ts) gives the part's
 * bytes. A part with a span is stored once, as part of the raw copy (docs/architecture.md,
 * "Durability": bytes once).
 */
export interface PartSpan {
  readonly start: number;
  readonly end: number;
  /** The Content-Transfer-Encoding as the walk read it, lower-cased ('' when none). */
  readonly encoding: string;
}

/**
 * What a part is stored for: a document is uploaded (and may be read back from the raw copy
 * instead, see PartSpan); a container is opened after DATA from its stored bytes.
 */
export type PartPurpose = 'document' | 'container';

export interface PartStore {
  /** A writer for the leaf with this index (LeafPart.index); called at most once per index. */
  openPart(index: number, purpose: PartPurpose): PartWriter;
  /**
   * The document part `index` was not written: its bytes are `span` of the raw copy. Called
   * once the part has ended, only by a walk asked to (WalkOptions.spansOfRaw).
   */
  recordSpan(index: number, span: PartSpan): void;
}

/** Reads back a part the walk stored: a container, opened once DATA has ended. */
export interface PartReader {
  /** The whole part (at most smtp.maxPartSize bytes: larger containers are never stored). */
  readPart(index: number): Promise<Buffer>;
}
