import { createHash } from 'node:crypto';
import { RefusalError } from '../errors.ts';
import { createCidScanner } from './cid-references.ts';
import { ARCHIVES_NOT_UNPACKED, CONTAINER_NAMES } from './containers/contained-file.ts';
import { containerKind } from './containers/container-kind.ts';
import type { LeafDescription } from './describe-leaf.ts';
import { type DocumentType, inspectType } from './detect/detect-type.ts';
import { isEncryptedPdf } from './detect/pdf-encryption.ts';
import { FileTail } from './file-tail.ts';
import type { ContainerPart, LeafPart } from './leaf-part.ts';
import type { PartPurpose, PartStore, PartWriter } from './part-store.ts';

/**
 * How much of a candidate's start is kept for type detection, in bytes. Magic numbers sit
 * in the first few bytes, but DOCX/XLSX/ODT are told apart by the names of zip entries that
 * follow the first ones, and DOC/XLS by a compound file's directory, which small files keep
 * near the start. 256 KiB reaches both in the files mail carries while bounding what twenty
 * concurrent messages hold (20 x 256 KiB).
 */
export const HEAD_BYTES = 256 * 1024;

/**
 * How much of a PDF's end is kept to read its trailer, in bytes: the trailer ends the file,
 * and a cross-reference stream's dictionary comes before its data, which stays well under
 * this in the files mail carries. Kept for PDFs only, as chunks that pass anyway.
 */
export const PDF_TAIL_BYTES = 256 * 1024;

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
 * as they pass, none stored (docs/architecture.md, "Attachment selection").
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
  // A PDF's first bytes and its last, to tell whether it is encrypted once it has ended.
  let pdfHead: Buffer[] = [];
  let pdfTail: FileTail | null = null;

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
        if (finding.detectedType === 'pdf') [pdfHead, pdfTail] = [head, tailOf(head)];
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
        pdfTail?.push(chunk);
        await writer.write(chunk);
      }
    }
    cids?.end();
    if (typed && head !== null) {
      finding = await inspect(head, true, leaf.declaredType, fileName());
      container = containerOf(head, finding, leaf, fileName(), context.storeArchives);
      if (finding.detectedType !== null || opens(container, context))
        writer = await storeHead(head, leaf.index, purposeOf(container), context.store);
      if (finding.detectedType === 'pdf') [pdfHead, pdfTail] = [head, tailOf(head)];
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
    encrypted: pdfTail !== null && encrypted(pdfHead, pdfTail, size),
  };
}

function tailOf(head: readonly Buffer[]): FileTail {
  const tail = new FileTail(PDF_TAIL_BYTES);
  for (const chunk of head) tail.push(chunk);
  return tail;
}

/** Whether the PDF whose ends these are is encrypted (detect/pdf-encryption.ts). */
function encrypted(head: Buffer[], tail: FileTail, size: number): boolean {
  const end = tail.bytes();
  return isEncryptedPdf({
    head: Buffer.concat(head).subarray(0, HEAD_BYTES),
    tail: end,
    tailStart: size - end.length,
  });
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
