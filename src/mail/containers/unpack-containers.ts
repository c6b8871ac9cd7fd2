import { createHash } from 'node:crypto';
import { RefusalError } from '../../errors.ts';
import { inspectType } from '../detect/detect-type.ts';
import { isEncryptedPdf } from '../detect/pdf-encryption.ts';
import type { LeafPart } from '../leaf-part.ts';
import type { PartReader, PartStore, PartWriter } from '../part-store.ts';
import { selectAttachments } from '../select-attachments.ts';
import type { WalkLimits } from '../walk-limits.ts';
import type { WalkResult } from '../walk-message.ts';
import {
  ARCHIVES_NOT_UNPACKED,
  CONTAINER_NAMES,
  type ContainedEntry,
  ContainerError,
  type ContainerLimits,
} from './contained-file.ts';
import { containerKind } from './container-kind.ts';
import type { ContainerUnpacker } from './container-process.ts';

/**
 * How much an archive's files may come to, as a multiple of smtp.maxPartSize (80 MB at the
 * defaults): room for a few full-size documents, not for a zip bomb.
 */
const TOTAL_SIZE_FACTOR = 4;
/**
 * The highest uncompressed:compressed ratio of one ZIP entry. Documents compress 1:1 (PDF,
 * JPG) to about 10:1 (text); 100:1 is Apache POI's zip-bomb threshold (ZipSecureFile).
 */
const MAX_RATIO = 100;

export interface UnpackContext {
  /** Where the walk stored the containers. */
  reader: PartReader;
  /** Where the files taken out go, as parts of the message like any other. */
  store: PartStore;
  limits: WalkLimits;
  unpacker: ContainerUnpacker;
  /** Whether a workspace the message is addressed to sets `archives: unpack`; ZIP archives stay shut otherwise. */
  unpackArchives: boolean;
  /** The bounds of one message's containers taken together (MessageBudget). */
  budget: MessageBudget;
}

/**
 * What all containers of one message may yield together, beside each container's own bounds:
 * without it, thirty 80 MB archives in one 25 MB message all reach Redis before decide counts.
 */
export interface MessageBudget {
  /** Bytes of all files taken out (smtp.maxMessageSize): no more than the message could carry as parts. */
  maxBytes: number;
  /** Entries of all containers (smtp.maxParts), as the MIME walk bounds the message's own parts. */
  maxEntries: number;
  /**
   * Supported documents (smtp.maxAttachments): one more refuses the message at once
   * (docs/architecture.md, "The decision").
   */
  maxAttachments: number;
}

/**
 * Open the containers the walk found (docs/architecture.md, "Attachment selection"): each file inside a TNEF
 * `winmail.dat`, an attached Outlook item or (for `archives: unpack`) a ZIP archive becomes a
 * part of the message, typed from its bytes and stored like any other, with its path. A
 * container that cannot be opened (malformed, past a bound) is skipped with the reason and
 * nothing of it is kept; a container inside a container is not opened.
 *
 * The containers' bytes are read back from the part store after DATA (each at most
 * smtp.maxPartSize, or it was not stored), one container at a time per message.
 */
export async function unpackContainers(walk: WalkResult, context: UnpackContext): Promise<WalkResult> {
  const parts = [...walk.parts];
  const { budget } = context;
  let nextIndex = parts.reduce((highest, part) => Math.max(highest, part.index + 1), 0);
  let entriesLeft = budget.maxEntries;
  let bytesLeft = budget.maxBytes;
  let documents = selectAttachments(walk).documents.length;
  for (const [position, part] of walk.parts.entries()) {
    const container = part.container;
    if (container === null || !part.stored) continue;
    const name = CONTAINER_NAMES[container.kind];
    if (container.kind === 'zip' && !context.unpackArchives) {
      parts[position] = withOutcome(part, `${name}, ${ARCHIVES_NOT_UNPACKED}`);
      continue;
    }
    if (entriesLeft === 0 || bytesLeft === 0) {
      parts[position] = withOutcome(part, `${name}, not opened: ${spent(budget)}`);
      continue;
    }
    const limits: ContainerLimits = {
      maxEntries: Math.min(context.limits.maxParts, entriesLeft),
      maxFileSize: context.limits.maxPartSize,
      maxTotalSize: Math.min(TOTAL_SIZE_FACTOR * context.limits.maxPartSize, bytesLeft),
      maxRatio: MAX_RATIO,
    };
    const inner: LeafPart[] = [];
    const writers: PartWriter[] = [];
    let entries = 0;
    let bytes = 0;
    const onEntry = async (entry: ContainedEntry) => {
      entries += 1;
      bytes += 'bytes' in entry ? entry.bytes.length : 0;
      // The readers bound the entries; only the ZIP reader knows the total before reading.
      if (entries > entriesLeft || bytes > bytesLeft) throw new ContainerError(spent(budget));
      const leaf = await takeOut(entry, part, nextIndex++, context, writers);
      inner.push(leaf);
      if (leaf.stored) documents += 1;
      if (documents > budget.maxAttachments) {
        throw new RefusalError(
          'TOO_MANY_ATTACHMENTS',
          `more than ${budget.maxAttachments} supported attachments once its containers are opened, at most ${budget.maxAttachments} are taken per message`,
        );
      }
    };
    try {
      await context.unpacker.unpack(
        container.kind,
        await context.reader.readPart(part.index),
        limits,
        onEntry,
      );
    } catch (err) {
      await Promise.allSettled(writers.map((writer) => writer.discard()));
      if (!(err instanceof ContainerError)) throw err;
      documents -= inner.filter((leaf) => leaf.stored).length;
      const narrowed = limits.maxTotalSize < TOTAL_SIZE_FACTOR * context.limits.maxPartSize;
      const why =
        narrowed && err.message.startsWith('its files come to')
          ? `${err.message} (what is left of the bytes it takes out of one message)`
          : err.message;
      parts[position] = withOutcome(part, `${name} that cannot be opened: ${why}`);
      continue;
    }
    entriesLeft -= entries;
    bytesLeft -= bytes;
    const opened = `${name}, opened: its ${inner.length} ${inner.length === 1 ? 'file is' : 'files are'} listed on their own`;
    parts[position] = withOutcome(
      part,
      container.kind === 'zip' ? `${opened}, for the workspaces that set archives: unpack` : opened,
    );
    parts.push(...inner);
  }
  return { ...walk, parts };
}

/** Why a container is not (or no longer) read: the message's containers used up its budget. */
function spent(budget: MessageBudget): string {
  return `the files of this message's containers reached the ${budget.maxEntries} entries or ${budget.maxBytes} bytes this server takes out of one message`;
}

function withOutcome(part: LeafPart, outcome: string): LeafPart {
  return part.container === null ? part : { ...part, container: { ...part.container, outcome } };
}

/** One entry of a container as a part of the message: typed from its bytes, stored when it is a document. */
async function takeOut(
  entry: ContainedEntry,
  container: LeafPart,
  index: number,
  context: UnpackContext,
  writers: PartWriter[],
): Promise<LeafPart> {
  const base = {
    index,
    partNumber: container.partNumber,
    disposition: 'attachment' as const,
    fileName: entry.name,
    contentId: null,
    depth: container.depth,
    role: 'candidate' as const,
    path: `${container.path} > ${entry.within === undefined ? '' : `${entry.within} > `}${entry.name ?? 'unnamed file'}`,
    container: null,
    inArchive: container.container?.kind === 'zip',
    // A container out of decrypted mail: its files are the same workspaces' documents.
    ...(container.decryptedFor === undefined ? {} : { decryptedFor: container.decryptedFor }),
  };
  if ('skip' in entry) {
    return {
      ...base,
      declaredType: 'application/octet-stream',
      size: entry.size,
      sha256: '',
      detectedType: null,
      bytesType: null,
      stored: false,
      exclusion: entry.skip,
      textContent: false,
    };
  }
  const declaredType = entry.declaredType ?? 'application/octet-stream';
  const found = await inspectType({ head: entry.bytes, declaredType, fileName: entry.name, complete: true });
  const nested =
    found.type === null
      ? containerKind({ head: entry.bytes, bytesType: found.bytesType, declaredType, fileName: entry.name })
      : null;
  let stored = false;
  if (found.type !== null && entry.bytes.length > 0) {
    const writer = context.store.openPart(index, 'document');
    writers.push(writer);
    await writer.write(entry.bytes);
    await writer.end();
    stored = true;
  }
  return {
    ...base,
    declaredType,
    size: entry.bytes.length,
    sha256: createHash('sha256').update(entry.bytes).digest('hex'),
    detectedType: found.type,
    bytesType: found.bytesType,
    stored,
    exclusion:
      nested === null
        ? null
        : `${CONTAINER_NAMES[nested]} inside a container, not opened (containers are opened one level deep)`,
    textContent: found.text,
    // The whole file is in hand: both of its ends are the file (detect/pdf-encryption.ts).
    encrypted: found.type === 'pdf' && isEncryptedPdf({ head: entry.bytes, tail: entry.bytes, tailStart: 0 }),
  };
}
