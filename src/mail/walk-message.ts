import { finished, type Readable, type Transform } from 'node:stream';
import { Splitter, type SplitterChunk } from '@zone-eu/mailsplit';
import libmime from 'libmime';
import { asError, RefusalError } from '../errors.ts';
import { collectBody } from './collect-body.ts';
import { collectLeaf, type LeafPart } from './collect-leaf.ts';
import { describeLeaf } from './describe-leaf.ts';
import { createDecodingSink, type LeafSink } from './leaf-sink.ts';
import type { PartStore, PartWriter } from './part-store.ts';
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

/** The names clients give uuencode as a Content-Transfer-Encoding (no RFC registers one). */
const UUENCODE = new Set(['x-uuencode', 'uuencode', 'x-uue', 'uue']);

/** State shared by the walk of a message and of the messages attached to it. */
interface Walk {
  readonly store: PartStore;
  /** Every writer opened, so that a failed walk discards parts already ended too. */
  readonly writers: PartWriter[];
  readonly limits: WalkLimits;
  readonly storeBodies: boolean;
  readonly storeArchives: boolean;
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

  try {
    await walkLevel(walk, source, 0, [], (node) => Object.assign(top, readTopHeaders(node)));
  } catch (err) {
    source.resume();
    // Parts stored and ended before the failure are of no use either.
    await Promise.allSettled(walk.writers.map((writer) => writer.discard()));
    throw walk.failure ?? asError(err);
  }
  return { ...top, parts: walk.parts.sort((a, b) => a.index - b.index), htmlCids: walk.htmlCids };
}

/** Walk one message: the top-level one, or one attached as message/rfc822 at `depth`. */
async function walkLevel(
  walk: Walk,
  input: Readable,
  depth: number,
  prefix: readonly number[],
  onRoot?: (node: MimeNode) => void,
): Promise<void> {
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
    if (held !== null) await sink?.write(held);
    held = null;
  };
  try {
    for await (const item of splitter as AsyncIterable<SplitterChunk>) {
      if (item.type === 'node') {
        await release();
        await sink?.end();
        sink = null;
        leafBytes = 0;
        if (item.root) onRoot?.(item);
        checkNesting(item);
        if (item.multipart === false) sink = openLeaf(walk, item, depth, prefix);
      } else if (item.type === 'body') {
        if (leafBytes === 0 && sink !== null && isLineBreak(item.value)) held = Buffer.from(item.value);
        else {
          await release();
          await sink?.write(item.value);
        }
        leafBytes += item.value.length;
      } else {
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

/** mailsplit decodes base64 and quoted-printable; uuencode is decoded here (uudecoder.ts). */
function transferDecoder(node: MimeNode): Transform {
  return UUENCODE.has(node.encoding || '') ? new Uudecoder() : node.getDecoder();
}

function openLeaf(walk: Walk, node: MimeNode, depth: number, prefix: readonly number[]): LeafSink {
  const description = describeLeaf(node, prefix);
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
    return trackedSink(walk, transferDecoder(node), (decoded) =>
      walkLevel(walk, decoded, depth + 1, innerPrefix),
    );
  }

  walk.leafCount += 1;
  if (walk.leafCount > walk.limits.maxParts) {
    throw new RefusalError(
      'MIME_LIMIT',
      `the message has more than the ${walk.limits.maxParts} parts this server reads`,
    );
  }
  const leaf = { ...description, index: walk.leafCount - 1, depth };
  const decoder = transferDecoder(node);
  // A uuencoded part without a name of its own is named by its `begin` line.
  const nameFromContent = decoder instanceof Uudecoder ? () => decoder.fileName : undefined;
  return trackedSink(walk, decoder, async (decoded) => {
    const context = {
      store: walk.store,
      maxPartSize: walk.limits.maxPartSize,
      htmlCids: walk.htmlCids,
      storeArchives: walk.storeArchives,
      ...(nameFromContent ? { nameFromContent } : {}),
    };
    const collect = walk.storeBodies && leaf.role === 'body' && depth === 0 ? collectBody : collectLeaf;
    walk.parts.push(await collect(decoded, leaf, context));
  });
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
    openPart(index) {
      const writer = store.openPart(index);
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
