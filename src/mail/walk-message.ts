import { finished, type Readable, type Transform } from 'node:stream';
import { Splitter, type SplitterChunk } from '@zone-eu/mailsplit';
import libmime from 'libmime';
import { asError, RefusalError } from '../errors.ts';
import { collectBody } from './collect-body.ts';
import { collectLeaf, type LeafPart } from './collect-leaf.ts';
import { describeLeaf } from './describe-leaf.ts';
import { createDecodingSink, type LeafSink } from './leaf-sink.ts';
import type { PartPurpose, PartStore, PartWriter } from './part-store.ts';
import { passesThrough, transferDecoder } from './transfer-decoder.ts';
import { Uudecoder } from './uudecoder.ts';

export type { LeafPart } from './collect-leaf.ts';

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

export interface WalkOptions {
  /**
   * Store the bodies of the top-level message (in UTF-8, see collect-body.ts), for a workspace
   * that takes the body as a document; default false: bodies are only counted.
   */
  storeBodies?: boolean;
  /**
   * Store ZIP archives to be opened after DATA, for a workspace that sets `archives: unpack`;
   * default false: an archive is only counted, never written to Redis.
   */
  storeArchives?: boolean;
  /**
   * The input is the raw copy the store keeps: a document part is not written to the store
   * but recorded as its span of the raw copy (PartStore.recordSpan), to be decoded from it
   * when it is uploaded, so that the message is stored once. Default false: every kept part
   * is written. Parts whose place in the raw copy is not a span of it (inside an attached
   * message that is itself base64 or quoted-printable) are written either way.
   */
  spansOfRaw?: boolean;
}

export interface WalkResult {
  /** Message-ID header of the top-level message, without <>. */
  messageId: string | null;
  /** Decoded (RFC 2047) Subject; null when there is none. */
  subject: string | null;
  /** Raw values (unfolded, NOT decoded) of every top-level From header, in order. */
  fromHeaders: string[];
  /** Every leaf, in message order (by index). */
  parts: LeafPart[];
  /** Content-IDs referenced as cid: from any HTML body, lower-cased and percent-decoded. */
  htmlCids: ReadonlySet<string>;
}

type MimeNode = Extract<SplitterChunk, { type: 'node' }>;
/** A splitter or decoder, as far as stopping it goes. */
interface Closable {
  destroy(): unknown;
}

/**
 * How deeply multiparts may nest inside one message. Clients nest three or four levels
 * (mixed > related > alternative); mailsplit compares every body line with the boundary
 * of each open ancestor, so the nesting is what one line costs.
 */
const MAX_MULTIPART_NESTING = 32;

/** State shared by the walk of a message and of the messages attached to it. */
interface Walk {
  readonly store: PartStore;
  /** Every writer opened, so that a failed walk discards parts already ended too. */
  readonly writers: PartWriter[];
  readonly limits: WalkLimits;
  readonly storeBodies: boolean;
  readonly storeArchives: boolean;
  readonly spansOfRaw: boolean;
  readonly parts: LeafPart[];
  readonly htmlCids: Set<string>;
  leafCount: number;
  failure: Error | null;
  /** Splitters and decoders in use, closed at once when the walk fails. */
  readonly streams: Set<Closable>;
  fail(err: Error): void;
}

/**
 * Walk a message as it streams in (DESIGN.md, Ingest rule 3): every leaf, including those
 * of attached messages, is decoded and described; candidates of a supported type go to the
 * store as they are decoded, with backpressure; bodies are only counted (and HTML bodies
 * scanned for cid: references), unless `storeBodies` asks for those of the top-level message.
 * Nothing holds a whole message or part.
 *
 * Rejects with RefusalError MIME_LIMIT (depth, part count, header size) or PART_TOO_LARGE,
 * or with the source's or the store's error. On any failure every part written to the
 * store is discarded (ended ones too), and `source` is unpiped and left flowing, so a
 * caller that keeps writing to it does not stall.
 */
export async function walkMessage(
  source: Readable,
  store: PartStore,
  limits: WalkLimits,
  options: WalkOptions = {},
): Promise<WalkResult> {
  const writers: PartWriter[] = [];
  const walk: Walk = {
    store: trackWriters(store, writers),
    writers,
    limits,
    storeBodies: options.storeBodies ?? false,
    storeArchives: options.storeArchives ?? false,
    spansOfRaw: options.spansOfRaw ?? false,
    parts: [],
    htmlCids: new Set(),
    leafCount: 0,
    failure: null,
    streams: new Set(),
    fail(err) {
      if (walk.failure !== null) return;
      walk.failure = err;
      for (const stream of walk.streams) stream.destroy();
    },
  };
  const top: Pick<WalkResult, 'messageId' | 'subject' | 'fromHeaders'> = {
    messageId: null,
    subject: null,
    fromHeaders: [],
  };

  let received = 0;
  source.on('data', (chunk: Buffer) => {
    received += chunk.length;
  });
  try {
    const walked = await walkLevel(walk, source, 0, walk.spansOfRaw ? 0 : null, [], (node) =>
      Object.assign(top, readTopHeaders(node)),
    );
    // Spans are counted from what mailsplit hands on; a count that does not come to the input
    // means they are wrong, and a message stored with wrong spans would lose its documents.
    if (walk.spansOfRaw && walked !== received)
      throw new Error(
        `the MIME walk counted ${walked} of the message's ${received} bytes; its parts cannot be located`,
      );
  } catch (err) {
    source.resume();
    // Parts stored and ended before the failure are of no use either.
    await Promise.allSettled(walk.writers.map((writer) => writer.discard()));
    throw walk.failure ?? asError(err);
  }
  return { ...top, parts: walk.parts.sort((a, b) => a.index - b.index), htmlCids: walk.htmlCids };
}

/**
 * Where the leaf being read lies in the raw copy: `start` its first body byte (null when
 * this level of the message is not a span of the raw copy), `written` the body bytes handed
 * to its decoder so far.
 */
interface LeafPosition {
  readonly start: number | null;
  written: number;
}

/**
 * Walk one message: the top-level one, or one attached as message/rfc822 at `depth`.
 * `base` is where its first byte lies in the raw copy (null: not a span of it). Resolves
 * with the bytes of input mailsplit handed on (headers, bodies and boundaries).
 */
async function walkLevel(
  walk: Walk,
  input: Readable,
  depth: number,
  base: number | null,
  prefix: readonly number[],
  onRoot?: (node: MimeNode) => void,
): Promise<number> {
  const splitter = new Splitter({
    // Attached messages are walked by a nested walkLevel, whatever their disposition or
    // transfer encoding (mailsplit itself only enters inline, unencoded ones).
    ignoreEmbedded: true,
    maxHeadSize: walk.limits.maxHeaderBytes,
    // A tree whose containers each hold two or more parts has fewer nodes than twice its leaves.
    maxChildNodes: 2 * walk.limits.maxParts + 1,
  });
  walk.streams.add(splitter);
  let inputError: Error | null = null;
  // pipe() does not pass on an error or an early close of its source: stop the splitter.
  const stopWatching = finished(input, { writable: false }, (err) => {
    if (err) {
      inputError = err;
      splitter.destroy();
    }
  });
  input.pipe(splitter);

  let sink: LeafSink | null = null;
  let offset = 0;
  let position: LeafPosition = { start: null, written: 0 };
  const toSink = async (chunk: Buffer) => {
    position.written += chunk.length;
    await sink?.write(chunk);
  };
  /**
   * A leaf's first body chunk when it is one line break alone, held until what follows shows
   * whose it is. RFC 2046 5.1.1 gives the line break before a boundary to the boundary, and
   * mailsplit does so, except for a part whose body is empty: there it hands the line break
   * that ends the blank line after the headers to the body and starts the boundary chunk
   * with `--`. Taken as it came, an empty part before another part was a 2-byte file, while
   * the same part last (whose boundary chunk keeps its line break) was empty.
   */
  let held: Buffer | null = null;
  let leafBytes = 0;
  const release = async () => {
    if (held !== null) await toSink(held);
    held = null;
  };
  try {
    for await (const item of splitter as AsyncIterable<SplitterChunk>) {
      if (item.type === 'node') {
        await release();
        await sink?.end();
        sink = null;
        leafBytes = 0;
        offset += item._headerlen;
        if (item.root) onRoot?.(item);
        checkNesting(item);
        if (item.multipart === false) {
          position = { start: base === null ? null : base + offset, written: 0 };
          sink = openLeaf(walk, item, depth, prefix, position);
        }
      } else if (item.type === 'body') {
        offset += item.value.length;
        if (leafBytes === 0 && sink !== null && isLineBreak(item.value)) held = Buffer.from(item.value);
        else {
          await release();
          await toSink(item.value);
        }
        leafBytes += item.value.length;
      } else {
        offset += item.value.length;
        // Multipart structure (a boundary line): the leaf before it has ended.
        if (startsWithLineBreak(item.value)) await release();
        held = null;
        await sink?.end();
        sink = null;
        leafBytes = 0;
      }
    }
    await release();
    await sink?.end();
    sink = null;
    return offset;
  } catch (err) {
    await sink?.abort();
    const failure = walk.failure ?? inputError ?? asRefusal(asError(err), walk.limits);
    walk.fail(failure);
    throw failure;
  } finally {
    stopWatching();
    input.unpipe(splitter);
    walk.streams.delete(splitter);
  }
}

function isLineBreak(chunk: Buffer): boolean {
  return (
    (chunk.length === 1 && chunk[0] === 0x0a) ||
    (chunk.length === 2 && chunk[0] === 0x0d && chunk[1] === 0x0a)
  );
}

function startsWithLineBreak(chunk: Buffer): boolean {
  return chunk[0] === 0x0d || chunk[0] === 0x0a;
}

function openLeaf(
  walk: Walk,
  node: MimeNode,
  depth: number,
  prefix: readonly number[],
  position: LeafPosition,
): LeafSink {
  const description = describeLeaf(node, prefix);
  const encoding = node.encoding || '';
  // A message returned inside a report is not walked into (describe-leaf.ts, IN_REPORT): it
  // is one leaf, counted and skipped.
  if (node.contentType === 'message/rfc822' && description.exclusion === null) {
    if (depth + 1 > walk.limits.maxDepth) {
      const levels = `${walk.limits.maxDepth} ${walk.limits.maxDepth === 1 ? 'level' : 'levels'}`;
      throw new RefusalError(
        'MIME_LIMIT',
        `attached messages are nested more than ${levels} deep, deeper than this server reads`,
      );
    }
    const innerPrefix = description.partNumber.split('.').map(Number);
    const innerBase = passesThrough(encoding) ? position.start : null;
    return trackedSink(walk, transferDecoder(encoding), async (decoded) => {
      const walked = await walkLevel(walk, decoded, depth + 1, innerBase, innerPrefix);
      if (walk.spansOfRaw && innerBase !== null && walked !== position.written)
        throw new Error(
          `the MIME walk counted ${walked} of the attached message's ${position.written} bytes; its parts cannot be located`,
        );
    });
  }

  walk.leafCount += 1;
  if (walk.leafCount > walk.limits.maxParts) {
    throw new RefusalError(
      'MIME_LIMIT',
      `the message has more than the ${walk.limits.maxParts} parts this server reads`,
    );
  }
  const leaf = { ...description, index: walk.leafCount - 1, depth };
  const decoder = transferDecoder(encoding);
  // A uuencoded part without a name of its own is named by its `begin` line.
  const nameFromContent = decoder instanceof Uudecoder ? () => decoder.fileName : undefined;
  const collect = walk.storeBodies && leaf.role === 'body' && depth === 0 ? collectBody : collectLeaf;
  // A body taken as a document is stored as converted to UTF-8, never as a span.
  const spanned = walk.spansOfRaw && position.start !== null && collect === collectLeaf;
  const store = spanned ? spanStore(walk.store) : null;
  return trackedSink(walk, decoder, async (decoded) => {
    const context = {
      store: store ?? walk.store,
      maxPartSize: walk.limits.maxPartSize,
      htmlCids: walk.htmlCids,
      storeArchives: walk.storeArchives,
      ...(nameFromContent ? { nameFromContent } : {}),
    };
    const part = await collect(decoded, leaf, context);
    // Every body byte has passed the decoder by now: the span is complete.
    if (store?.spanned() && part.stored && position.start !== null) {
      const start = position.start;
      walk.store.recordSpan(part.index, { start, end: start + position.written, encoding });
    }
    walk.parts.push(part);
  });
}

/**
 * The store one leaf of a walk over the raw copy sees: a document is not written (the walk
 * records its span once it ends), a container is, to be opened after DATA.
 */
function spanStore(store: PartStore): PartStore & { spanned(): boolean } {
  let spanned = false;
  return {
    openPart(index: number, purpose: PartPurpose): PartWriter {
      if (purpose === 'container') return store.openPart(index, purpose);
      spanned = true;
      return { write: async () => undefined, end: async () => undefined, discard: async () => undefined };
    },
    recordSpan: (index, span) => store.recordSpan(index, span),
    spanned: () => spanned,
  };
}

function trackedSink(
  walk: Walk,
  decoder: Transform,
  consume: (decoded: Readable) => Promise<void>,
): LeafSink {
  walk.streams.add(decoder);
  decoder.once('close', () => walk.streams.delete(decoder));
  return createDecodingSink(
    decoder,
    (decoded) => consume(decoded),
    (err) => walk.fail(asRefusal(err, walk.limits)),
  );
}

/** Record every writer opened; its discard() runs once however often it is called. */
function trackWriters(store: PartStore, writers: PartWriter[]): PartStore {
  return {
    recordSpan: (index, span) => store.recordSpan(index, span),
    openPart(index, purpose) {
      const writer = store.openPart(index, purpose);
      let discarding: Promise<void> | null = null;
      const tracked: PartWriter = {
        write: (chunk) => writer.write(chunk),
        end: () => writer.end(),
        discard: () => {
          discarding ??= writer.discard();
          return discarding;
        },
      };
      writers.push(tracked);
      return tracked;
    },
  };
}

function checkNesting(node: MimeNode): void {
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

/**
 * mailsplit reports both of its limits as an `EMAXLEN` error; name the limit in the reply.
 * Anything else (the source failed, the store failed) passes through unchanged.
 */
function asRefusal(err: Error, limits: WalkLimits): Error {
  if ((err as Error & { code?: unknown }).code !== 'EMAXLEN') return err;
  return /header/i.test(err.message)
    ? new RefusalError(
        'MIME_LIMIT',
        // mailsplit counts a header line as at least 64 bytes: say so, so that a header of many
        // short lines is not told it is larger than it is.
        `a MIME header block is larger than the ${limits.maxHeaderBytes} bytes this server reads (a line counts at least 64)`,
      )
    : new RefusalError(
        'MIME_LIMIT',
        `the message has more MIME parts than the ${limits.maxParts} this server reads`,
      );
}

function readTopHeaders(node: MimeNode): Pick<WalkResult, 'messageId' | 'subject' | 'fromHeaders'> {
  const headers = node.headers;
  if (headers === false) return { messageId: null, subject: null, fromHeaders: [] };
  const messageId = headers.getFirst('message-id');
  const bracketed = /<([^<>]*)>/.exec(messageId)?.[1]?.trim();
  return {
    messageId: bracketed || messageId || null,
    subject: headers.hasHeader('subject') ? libmime.decodeWords(headers.getFirst('subject')) : null,
    // Unfolding (RFC 5322 2.2.3) removes only the line breaks; the value is otherwise as sent.
    fromHeaders: headers.get('from').map((line) =>
      line
        .slice(line.indexOf(':') + 1)
        .replace(/\r?\n|\r/g, '')
        .trim(),
    ),
  };
}
