import { finished, Readable, type Transform } from 'node:stream';
import { Splitter, type SplitterChunk } from '@zone-eu/mailsplit';
import { asError } from '../errors.ts';
import { collectBody } from './collect-body.ts';
import { collectLeaf } from './collect-leaf.ts';
import {
  DETACHED_SIGNATURE,
  isDetachedSignature,
  isSmimeEntity,
  type SmimeKeySource,
  type SmimeVerdict,
} from './containers/smime-entity.ts';
import { passesThrough, transferDecoder } from './decoders/transfer-decoder.ts';
import { Uudecoder } from './decoders/uudecoder.ts';
import { describeLeaf } from './describe-leaf.ts';
import { HeldLineBreak } from './held-line-break.ts';
import type { LeafPart } from './leaf-part.ts';
import { createDecodingSink, type LeafSink } from './leaf-sink.ts';
import { trackOpenedParts } from './opened-parts.ts';
import { checkCounted, type LeafPosition, leafPosition, leafSpans } from './part-spans.ts';
import type { PartStore } from './part-store.ts';
import { readTopHeaders, type TopHeaders } from './top-headers.ts';
import {
  asRefusal,
  checkDepth,
  checkNesting,
  checkPartCount,
  splitterLimits,
  type WalkLimits,
} from './walk-limits.ts';
import { type Level, TOP_LEVEL, walkSmimeEntity, within } from './walk-smime.ts';

export interface WalkOptions {
  /**
   * Store the bodies of the top-level message (in UTF-8, see collect-body.ts), for a workspace
   * that takes the body as a document; default false: bodies are only counted.
   */
  storeBodies?: boolean;
  /**
   * Store the bodies of the top-level message also when this says so of its header block
   * (read before any body): for mail a person must read, such as a forwarding confirmation.
   */
  storeBodiesOf?: (top: TopHeaders) => boolean;
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
  /**
   * The S/MIME keys of the workspaces the message is addressed to, read when encrypted mail is
   * met (decrypt-smime.ts); default null: encrypted S/MIME is skipped as `encrypted_smime`.
   */
  smimeKeys?: SmimeKeySource;
}

export interface WalkResult extends TopHeaders {
  /** Every leaf, in message order (by index). */
  parts: LeafPart[];
  /** Content-IDs referenced as cid: from any HTML body, lower-cased and percent-decoded. */
  htmlCids: ReadonlySet<string>;
  /** The S/MIME signature's verdict (the first signed entity's); absent for a message not signed. */
  smime?: SmimeVerdict;
}

type MimeNode = Extract<SplitterChunk, { type: 'node' }>;
/** A splitter or decoder, as far as stopping it goes. */
interface Closable {
  destroy(): unknown;
}

/** State shared by the walk of a message and of the messages attached to it. */
interface Walk {
  readonly store: PartStore;
  readonly limits: WalkLimits;
  /** Whether the top-level bodies are stored, asked when the first body is reached. */
  storeBodies: boolean | (() => boolean);
  readonly storeArchives: boolean;
  readonly spansOfRaw: boolean;
  readonly smimeKeys: SmimeKeySource;
  readonly parts: LeafPart[];
  readonly htmlCids: Set<string>;
  smime: SmimeVerdict | null;
  leafCount: number;
  failure: Error | null;
  /** Splitters and decoders in use, closed at once when the walk fails. */
  readonly streams: Set<Closable>;
  fail(err: Error): void;
}

/**
 * Walk a message as it streams in (docs/architecture.md, "DATA: the raw copy and the MIME walk"):
 * every leaf, including those of attached messages, is decoded and described; candidates of a
 * supported type go to the store as they are decoded, with backpressure; bodies are only counted
 * (and HTML bodies scanned for cid: references), unless `storeBodies` asks for those of the
 * top-level message. Nothing holds a whole message or part.
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
  const opened = trackOpenedParts(store);
  const top: TopHeaders = {
    messageId: null,
    subject: null,
    fromHeaders: [],
  };
  const { storeBodiesOf } = options;
  const walk: Walk = {
    store: opened.store,
    limits,
    storeBodies:
      options.storeBodies === true || storeBodiesOf === undefined
        ? (options.storeBodies ?? false)
        : () => storeBodiesOf(top),
    storeArchives: options.storeArchives ?? false,
    spansOfRaw: options.spansOfRaw ?? false,
    smimeKeys: options.smimeKeys ?? null,
    parts: [],
    htmlCids: new Set(),
    smime: null,
    leafCount: 0,
    failure: null,
    streams: new Set(),
    fail(err) {
      if (walk.failure !== null) return;
      walk.failure = err;
      for (const stream of walk.streams) stream.destroy();
    },
  };

  let received = 0;
  source.on('data', (chunk: Buffer) => {
    received += chunk.length;
  });
  try {
    const walked = await walkLevel(walk, source, 0, walk.spansOfRaw ? 0 : null, [], TOP_LEVEL, (node) =>
      Object.assign(top, readTopHeaders(node)),
    );
    if (walk.spansOfRaw) checkCounted(walked, received, "the message's");
  } catch (err) {
    source.resume();
    // Parts stored and ended before the failure are of no use either.
    await opened.discardAll();
    throw walk.failure ?? asError(err);
  }
  return {
    ...top,
    parts: walk.parts.sort((a, b) => a.index - b.index),
    htmlCids: walk.htmlCids,
    ...(walk.smime === null ? {} : { smime: walk.smime }),
  };
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
  level: Level,
  onRoot?: (node: MimeNode) => void,
): Promise<number> {
  const split = splitInput(walk, input);
  let sink: LeafSink | null = null;
  let offset = 0;
  let position: LeafPosition = { start: null, written: 0 };
  const toSink = async (chunk: Buffer) => {
    position.written += chunk.length;
    await sink?.write(chunk);
  };
  // An empty part's line break, which mailsplit hands to its body (held-line-break.ts).
  const lineBreak = new HeldLineBreak();
  let leafBytes = 0;
  const toSinkIfAny = async (chunk: Buffer | null) => {
    if (chunk !== null) await toSink(chunk);
  };
  try {
    for await (const item of split.splitter as AsyncIterable<SplitterChunk>) {
      if (item.type === 'node') {
        await toSinkIfAny(lineBreak.release());
        await sink?.end();
        sink = null;
        leafBytes = 0;
        offset += item._headerlen;
        if (item.root) onRoot?.(item);
        checkNesting(item);
        if (item.multipart === false) {
          position = leafPosition(base, offset);
          sink = openLeaf(walk, item, depth, prefix, position, level);
        }
      } else if (item.type === 'body') {
        offset += item.value.length;
        const held = leafBytes === 0 && sink !== null && lineBreak.hold(item.value);
        if (!held) {
          await toSinkIfAny(lineBreak.release());
          await toSink(item.value);
        }
        leafBytes += item.value.length;
      } else {
        offset += item.value.length;
        // Multipart structure (a boundary line): the leaf before it has ended.
        await toSinkIfAny(lineBreak.beforeBoundary(item.value));
        await sink?.end();
        sink = null;
        leafBytes = 0;
      }
    }
    await toSinkIfAny(lineBreak.release());
    await sink?.end();
    sink = null;
    return offset;
  } catch (err) {
    await sink?.abort();
    const failure = walk.failure ?? split.inputError ?? asRefusal(asError(err), walk.limits);
    walk.fail(failure);
    throw failure;
  } finally {
    split.close();
  }
}

/**
 * `input` piped into a splitter of its own, which `close` detaches; `inputError` is the error
 * `input` failed with, which stopped the splitter.
 */
function splitInput(walk: Walk, input: Readable) {
  const splitter = new Splitter({
    // Attached messages are walked by a nested walkLevel, whatever their disposition or
    // transfer encoding (mailsplit itself only enters inline, unencoded ones).
    ignoreEmbedded: true,
    ...splitterLimits(walk.limits),
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
  return {
    splitter,
    get inputError() {
      return inputError;
    },
    close() {
      stopWatching();
      input.unpipe(splitter);
      walk.streams.delete(splitter);
    },
  };
}

function openLeaf(
  walk: Walk,
  node: MimeNode,
  depth: number,
  prefix: readonly number[],
  position: LeafPosition,
  level: Level,
): LeafSink {
  const described = describeLeaf(node, prefix);
  const encoding = node.encoding || '';
  const signature = isDetachedSignature(described.declaredType) && described.exclusion === null;
  // The .p7s of a clear-signed message: its first part is walked as any other, this is not a document.
  const description = signature ? { ...described, exclusion: DETACHED_SIGNATURE } : described;
  if (signature) walk.smime ??= { signed: true, signature: 'unverified' };
  if (isSmimeEntity(description.declaredType) && description.exclusion === null) {
    return trackedSink(walk, transferDecoder(encoding), (decoded) =>
      walkSmimeEntity(walk, decoded, { description, depth, level }, (content, innerPrefix, inner) =>
        walkLevel(walk, Readable.from([content]), depth, null, innerPrefix, inner),
      ),
    );
  }
  // A message returned inside a report is not walked into (describe-leaf.ts, IN_REPORT): it
  // is one leaf, counted and skipped.
  if (node.contentType === 'message/rfc822' && description.exclusion === null) {
    checkDepth(depth + 1, walk.limits);
    const innerPrefix = description.partNumber.split('.').map(Number);
    const innerBase = passesThrough(encoding) ? position.start : null;
    return trackedSink(walk, transferDecoder(encoding), async (decoded) => {
      const walked = await walkLevel(walk, decoded, depth + 1, innerBase, innerPrefix, level);
      if (walk.spansOfRaw && innerBase !== null)
        checkCounted(walked, position.written, "the attached message's");
    });
  }

  walk.leafCount += 1;
  checkPartCount(walk.leafCount, walk.limits);
  const leaf = { ...description, index: walk.leafCount - 1, depth };
  const decoder = transferDecoder(encoding);
  // A uuencoded part without a name of its own is named by its `begin` line.
  const nameFromContent = decoder instanceof Uudecoder ? () => decoder.fileName : undefined;
  const topBody = leaf.role === 'body' && depth === 0;
  if (topBody && typeof walk.storeBodies === 'function') walk.storeBodies = walk.storeBodies();
  const collect = topBody && walk.storeBodies === true ? collectBody : collectLeaf;
  // A body taken as a document is stored as converted to UTF-8, never as a span.
  const spanned = walk.spansOfRaw && position.start !== null && collect === collectLeaf;
  const spans = spanned ? leafSpans(walk.store, position, encoding) : null;
  return trackedSink(walk, decoder, async (decoded) => {
    const context = {
      store: spans?.store ?? walk.store,
      maxPartSize: walk.limits.maxPartSize,
      htmlCids: walk.htmlCids,
      storeArchives: walk.storeArchives,
      ...(nameFromContent ? { nameFromContent } : {}),
    };
    const part = await collect(decoded, leaf, context);
    spans?.record(part);
    walk.parts.push(within(level, part));
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
