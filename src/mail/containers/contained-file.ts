/**
 * What a container (a TNEF `winmail.dat`, an attached Outlook item, a ZIP archive) yields, one
 * entry at a time: a file with its bytes, or an entry that is not opened and why.
 */
export type ContainedEntry = ContainedFile | ContainedSkip;

export interface ContainedFile {
  /** The name the container gives, decoded; null when it gives none. */
  name: string | null;
  /** The item inside the container it is attached to (a TNEF embedded message), for its path; absent when none. */
  within?: string;
  /** The MIME type the container declares for it (an Outlook attachment's mime tag), or null. */
  declaredType: string | null;
  bytes: Buffer;
}

export interface ContainedSkip {
  name: string | null;
  /** As ContainedFile's. */
  within?: string;
  /** Bytes as the container states them (not read). */
  size: number;
  /** Why the entry is not taken out, for the message record. */
  skip: string;
}

export type ContainerKind = 'tnef' | 'outlook-item' | 'zip';

/** How a container is named in records and replies. */
export const CONTAINER_NAMES: Readonly<Record<ContainerKind, string>> = {
  tnef: 'a TNEF container (application/ms-tnef)',
  'outlook-item': 'an Outlook item (.msg)',
  zip: 'a ZIP archive',
};

/** Why a ZIP archive stays shut: the parsing service takes no archives, so only `archives: unpack` opens one. */
export const ARCHIVES_NOT_UNPACKED = 'not opened: no workspace it is addressed to sets archives: unpack';

/** A container that cannot be opened as a whole: malformed, or past a bound. */
export class ContainerError extends Error {
  override name = 'ContainerError';
}

/** The bounds every container is read within (the MIME walk's limits, applied to its entries). */
export interface ContainerLimits {
  /** The most entries one container may hold (smtp.maxParts). */
  maxEntries: number;
  /** The largest file taken out, in bytes (smtp.maxPartSize); a larger one is skipped. */
  maxFileSize: number;
  /** The most bytes all files of one container may come to once taken out. */
  maxTotalSize: number;
  /** The highest uncompressed:compressed ratio of a ZIP entry. */
  maxRatio: number;
}
