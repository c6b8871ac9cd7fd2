import type { ContainerKind } from './containers/contained-file.ts';
import type { DocumentType } from './detect/detect-type.ts';

/**
 * One leaf of a message as the walk found it: what its headers say, what its bytes are, and
 * whether they were kept. The walk's result lists every leaf; the intake decides from these
 * which are documents of which workspace.
 */
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
  /**
   * A PDF whose trailer names an encryption dictionary (detect/pdf-encryption.ts): a document
   * only for workspaces that set `encryptedPdf: upload`. Absent for parts not checked.
   */
  encrypted?: boolean;
  /**
   * Taken out of encrypted S/MIME content, decrypted with the key of these workspaces: a
   * document (or body) only for them. Absent for parts not encrypted.
   */
  decryptedFor?: readonly string[];
}

export interface ContainerPart {
  kind: ContainerKind;
  /** What became of it, as the record's reason: opened, not opened and why, or too large. */
  outcome: string;
}
