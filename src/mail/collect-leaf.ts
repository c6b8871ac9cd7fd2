import { createHash } from 'node:crypto';
import { RefusalError } from '../errors.ts';
import { createCidScanner } from './cid-references.ts';
import { ARCHIVES_NOT_UNPACKED, CONTAINER_NAMES, type ContainerKind } from './contained-file.ts';
import { containerKind } from './container-kind.ts';
import type { LeafDescription } from './describe-leaf.ts';
import { type DocumentType, inspectType } from './detect-type.ts';
import type { PartPurpose, PartStore, PartWriter } from './part-store.ts';

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
  /** Decoded bytes; for a body stored as a document (collect-body.ts), the bytes stored, in UTF-8. */
  size: number;
  /** Hex SHA-256 of the decoded bytes (of the stored ones for a stored body); '' for other bodies, which are not hashed. */
  sha256: string;
  /** The supported format the bytes are; null = none (for bodies: html or txt once stored, else null). */
  detectedType: DocumentType | null;
  /** The MIME type the bytes show whether supported or not (e.g. application/zip); null when they show none. */
  bytesType: string | null;
  /** True when its bytes went to the PartStore and were ended. */
  stored: boolean;
  /** Why the headers alone rule it out as a document (describe-leaf.ts), or null. */
  exclusion: string | null;
  /** Its bytes show no format and read as text (detect-type.ts isText); false for bodies and excluded parts. */
  textContent: boolean;
  /**
   * Where it came from, for the record: `part 3 > winmail.dat`, and for a file taken out of
   * a container `part 3 > winmail.dat > contract.pdf`.
   */
  path: string;
  /** A container whose files are parts of their own (unpack-containers.ts), or null. */
  container: ContainerPart | null;
  /** Taken out of a ZIP archive: a document only for workspaces that set `archives: unpack`. */
  inArchive: boolean;
}

export interface ContainerPart {
  kind: ContainerKind;
  /** What became of it, as the record's reason: opened, not opened and why, or too large. */
  outcome: string;
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
  /** The largest document part, in decoded bytes; a larger part of another type is only counted. */
  maxPartSize: number;
  /** Where the cid: references of HTML bodies are gathered. */
  htmlCids: Set<string>;
  /** A name the content carries (a uuencode `begin` line), for a part whose headers name none. */
  nameFromContent?: () => string | null;
  /**
   * Whether ZIP archives are stored to be opened after DATA (an addressed workspace sets
   * `archives: unpack`); otherwise one is only counted. TNEF and Outlook items are always stored.
   */
  storeArchives: boolean;
}

interface Finding {
  detectedType: DocumentType | null;
  bytesType: string | null;
  textContent: boolean;
}

/**
 * Read one leaf's decoded bytes as they stream: count and hash them, keep the head for
 * type detection, and write a candidate of a supported type to the store, awaiting each
 * write. A candidate is held back until its type is known (the first HEAD_BYTES, or all of
 * it when shorter, or as much as came before it passed maxPartSize), so parts the service
 * would not take never reach the store.
 *
 * Only a document part over maxPartSize refuses the message (PART_TOO_LARGE): a 30 MB video
 * beside an invoice is skipped like any part of another type, its bytes counted and hashed
 * as they pass, none stored (DESIGN.md, Ingest rule 3).
 * Bodies and parts excluded by their headers are counted, never typed or stored; HTML
 * bodies are scanned for cid: references. (A body a workspace takes as a document is read
 * by collect-body.ts instead.)
 */
export async function collectLeaf(
  decoded: AsyncIterable<Buffer>,
  leaf: LeafDescription & { index: number; depth: number },
  context: CollectContext,
): Promise<LeafPart> {
  const isBody = leaf.role === 'body';
  const typed = !isBody && leaf.exclusion === null;
  const cids = isBody && leaf.declaredType === 'text/html' ? createCidScanner(context.htmlCids) : null;
  const hash = createHash('sha256');
  const fileName = () => leaf.fileName ?? context.nameFromContent?.() ?? null;
  let size = 0;
  let head: Buffer[] | null = [];
  let headBytes = 0;
  let finding: Finding = { detectedType: null, bytesType: null, textContent: false };
  let writer: PartWriter | null = null;
  let container: ContainerPart | null = null;

  try {
    for await (const chunk of decoded) {
      size += chunk.length;
      if (isBody) {
        cids?.push(chunk);
        continue;
      }
      hash.update(chunk);
      if (!typed) continue;
      if (head !== null) {
        head.push(chunk);
        headBytes += chunk.length;
        if (headBytes < HEAD_BYTES && size <= context.maxPartSize) continue;
        finding = await inspect(head, false, leaf.declaredType, fileName());
        container = containerOf(head, finding, leaf, fileName(), context.storeArchives);
        if (finding.detectedType !== null && size > context.maxPartSize)
          throw tooLarge(leaf, context.maxPartSize);
        if (container !== null && size > context.maxPartSize) container = tooLargeToOpen(container, context);
        else if (finding.detectedType !== null || opens(container, context))
          writer = await storeHead(head, leaf.index, purposeOf(container), context.store);
        head = null;
      } else if (writer !== null) {
        if (size > context.maxPartSize) {
          if (container === null) throw tooLarge(leaf, context.maxPartSize);
          // A container too large to open is skipped like any other part of no supported type.
          await discardQuietly(writer);
          writer = null;
          container = tooLargeToOpen(container, context);
          continue;
        }
        await writer.write(chunk);
      }
    }
    cids?.end();
    if (typed && head !== null) {
      finding = await inspect(head, true, leaf.declaredType, fileName());
      container = containerOf(head, finding, leaf, fileName(), context.storeArchives);
      if (finding.detectedType !== null || opens(container, context))
        writer = await storeHead(head, leaf.index, purposeOf(container), context.store);
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
    fileName: fileName(),
    contentId: leaf.contentId,
    depth: leaf.depth,
    role: leaf.role,
    size,
    sha256: isBody ? '' : hash.digest('hex'),
    detectedType: finding.detectedType,
    bytesType: finding.bytesType,
    stored: writer !== null,
    exclusion: leaf.exclusion,
    textContent: finding.textContent,
    path: [`part ${leaf.partNumber}`, ...(fileName() === null ? [] : [fileName()])].join(' > '),
    container,
    inArchive: false,
  };
}

/** The container a part of no supported type is, stored so it can be opened after DATA. */
function containerOf(
  head: Buffer[],
  finding: Finding,
  leaf: LeafDescription,
  fileName: string | null,
  storeArchives: boolean,
): ContainerPart | null {
  if (finding.detectedType !== null) return null;
  const kind = containerKind({
    head: Buffer.concat(head).subarray(0, HEAD_BYTES),
    bytesType: finding.bytesType,
    declaredType: leaf.declaredType,
    fileName,
  });
  if (kind === null) return null;
  if (kind === 'zip' && !storeArchives)
    return { kind, outcome: `${CONTAINER_NAMES[kind]}, ${ARCHIVES_NOT_UNPACKED}` };
  return { kind, outcome: `${CONTAINER_NAMES[kind]}, not opened` };
}

/** Whether the container is stored to be opened: a ZIP archive no workspace unpacks is only counted. */
function opens(container: ContainerPart | null, context: CollectContext): boolean {
  return container !== null && (container.kind !== 'zip' || context.storeArchives);
}

function tooLargeToOpen(container: ContainerPart, context: CollectContext): ContainerPart {
  const megabytes = Number((context.maxPartSize / MEGABYTE).toPrecision(3));
  return {
    kind: container.kind,
    outcome: `${CONTAINER_NAMES[container.kind]} larger than the ${megabytes} MB this server opens`,
  };
}

/** Decide the type from the head (`complete` when it is the whole part). */
async function inspect(
  head: Buffer[],
  complete: boolean,
  declaredType: string,
  fileName: string | null,
): Promise<Finding> {
  const found = await inspectType({
    head: Buffer.concat(head).subarray(0, HEAD_BYTES),
    declaredType,
    fileName,
    complete,
  });
  return { detectedType: found.type, bytesType: found.bytesType, textContent: found.text };
}

/** A part is stored to be opened when it is a container, else to be uploaded. */
function purposeOf(container: ContainerPart | null): PartPurpose {
  return container === null ? 'document' : 'container';
}

/** Open the part of a document or container and store the head kept while its type was unknown. */
async function storeHead(
  head: Buffer[],
  index: number,
  purpose: PartPurpose,
  store: PartStore,
): Promise<PartWriter> {
  const writer = store.openPart(index, purpose);
  try {
    for (const chunk of head) await writer.write(chunk);
  } catch (err) {
    await discardQuietly(writer);
    throw err;
  }
  return writer;
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
