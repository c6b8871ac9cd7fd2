import { createHash } from 'node:crypto';
import { RefusalError } from '../errors.ts';
import { createCidScanner } from './cid-references.ts';
import type { LeafDescription } from './describe-leaf.ts';
import { type DocumentType, inspectType } from './detect-type.ts';
import type { PartStore, PartWriter } from './part-store.ts';

export interface LeafPart {
  /** 0-based order of leaves in the message. */
  index: number;
  /** IMAP-style, e.g. "2.1". */
  partNumber: string;
  /** Lower-cased Content-Type without parameters ("text/plain" when absent). */
  declaredType: string;
  disposition: 'inline' | 'attachment' | null;
  /** Decoded (RFC 2231 and RFC 2047), NOT sanitised. */
  fileName: string | null;
  /** Without angle brackets, as written (compare lower-cased with WalkResult.htmlCids). */
  contentId: string | null;
  /** 0 = the message itself, 1 = inside one attached message/rfc822, ... */
  depth: number;
  /** 'body' = a text/plain or text/html alternative of a message body (see leafRole). */
  role: 'body' | 'candidate';
  /** Decoded bytes. */
  size: number;
  /** Hex SHA-256 of the decoded bytes; '' for bodies, which are not hashed. */
  sha256: string;
  /** The supported format the bytes are; null = none (and always null for bodies). */
  detectedType: DocumentType | null;
  /** The MIME type the bytes show whether supported or not (e.g. application/zip); null when they show none. */
  bytesType: string | null;
  /** True when its bytes went to the PartStore and were ended. */
  stored: boolean;
}

/**
 * How much of a candidate's start is kept for type detection, in bytes. Magic numbers sit
 * in the first few bytes, but DOCX/XLSX/ODT are told apart by the names of zip entries that
 * follow the first ones, and DOC/XLS by a compound file's directory, which small files keep
 * near the start. 256 KiB reaches both in the files mail carries while bounding what twenty
 * concurrent messages hold (20 x 256 KiB).
 */
export const HEAD_BYTES = 256 * 1024;

/** 1 MB as the parsing service counts it (its limit is "20 MB", configured as 20,000,000). */
const MEGABYTE = 1_000_000;

export interface CollectContext {
  store: PartStore;
  maxPartSize: number;
  /** Where the cid: references of HTML bodies are gathered. */
  htmlCids: Set<string>;
}

/**
 * Read one leaf's decoded bytes as they stream: count and hash them, keep the head for
 * type detection, and write a candidate of a supported type to the store, awaiting each
 * write. A candidate is held back until its type is known (the first HEAD_BYTES, or all of
 * it when shorter), so parts the service would not take never reach the store.
 * Bodies are counted, never stored; HTML bodies are scanned for cid: references.
 */
export async function collectLeaf(
  decoded: AsyncIterable<Buffer>,
  leaf: LeafDescription & { index: number; depth: number },
  context: CollectContext,
): Promise<LeafPart> {
  const isBody = leaf.role === 'body';
  const cids = isBody && leaf.declaredType === 'text/html' ? createCidScanner(context.htmlCids) : null;
  const hash = createHash('sha256');
  let size = 0;
  let head: Buffer[] | null = [];
  let headBytes = 0;
  let detectedType: DocumentType | null = null;
  let bytesType: string | null = null;
  let writer: PartWriter | null = null;

  try {
    for await (const chunk of decoded) {
      size += chunk.length;
      if (isBody) {
        cids?.push(chunk);
        continue;
      }
      if (size > context.maxPartSize) throw tooLarge(leaf, context.maxPartSize);
      hash.update(chunk);
      if (head !== null) {
        head.push(chunk);
        headBytes += chunk.length;
        if (headBytes >= HEAD_BYTES) {
          ({ detectedType, bytesType, writer } = await settleType(head, false, leaf, context.store));
          head = null;
        }
      } else if (writer !== null) {
        await writer.write(chunk);
      }
    }
    cids?.end();
    if (!isBody && head !== null) {
      ({ detectedType, bytesType, writer } = await settleType(head, true, leaf, context.store));
    }
    if (writer !== null) await writer.end();
  } catch (err) {
    if (writer !== null) await discardQuietly(writer);
    throw err;
  }

  return {
    index: leaf.index,
    partNumber: leaf.partNumber,
    declaredType: leaf.declaredType,
    disposition: leaf.disposition,
    fileName: leaf.fileName,
    contentId: leaf.contentId,
    depth: leaf.depth,
    role: leaf.role,
    size,
    sha256: isBody ? '' : hash.digest('hex'),
    detectedType,
    bytesType,
    stored: writer !== null,
  };
}

/**
 * Decide the type from the head (`complete` when it is the whole part) and, for a supported
 * type, open the part and store the head.
 */
async function settleType(
  head: Buffer[],
  complete: boolean,
  leaf: LeafDescription & { index: number },
  store: PartStore,
): Promise<{ detectedType: DocumentType | null; bytesType: string | null; writer: PartWriter | null }> {
  const { type: detectedType, bytesType } = await inspectType({
    head: Buffer.concat(head).subarray(0, HEAD_BYTES),
    declaredType: leaf.declaredType,
    fileName: leaf.fileName,
    complete,
  });
  if (detectedType === null) return { detectedType, bytesType, writer: null };
  const writer = store.openPart(leaf.index);
  try {
    for (const chunk of head) await writer.write(chunk);
  } catch (err) {
    await discardQuietly(writer);
    throw err;
  }
  return { detectedType, bytesType, writer };
}

function tooLarge(leaf: LeafDescription, limit: number): RefusalError {
  const name = leaf.fileName ?? `part ${leaf.partNumber}`;
  const megabytes = Number((limit / MEGABYTE).toPrecision(3));
  return new RefusalError(
    'PART_TOO_LARGE',
    `attachment "${name}" is larger than the ${megabytes} MB the parsing service accepts`,
  );
}

/**
 * Forget a part after a failure without masking the failure: the walk's own error is what
 * the caller acts on, and the store's owner discards the whole message when the walk fails.
 */
async function discardQuietly(writer: PartWriter): Promise<void> {
  await Promise.allSettled([writer.discard()]);
}
