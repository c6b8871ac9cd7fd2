import type { KeyObject, X509Certificate } from 'node:crypto';

// What the walk and the record need to know of S/MIME without opening it: the types that name
// an S/MIME entity, what opening one gives, and the reasons a part stays shut. Opening it
// (open-smime.ts, PKI.js) is loaded when the first S/MIME entity is met: an idle gateway and
// mail without S/MIME never load PKI.js (about 600 KB of code).

/**
 * A key encrypted mail may be sent to: a workspace's S/MIME private key and its certificate
 * (checked to belong together when they were read), and the workspaces that hold them.
 */
export interface SmimeIdentity {
  /** Identifiers of the workspaces configured with this key and certificate. */
  workspaces: readonly string[];
  key: KeyObject;
  certificate: X509Certificate;
}

/** The S/MIME identities of the workspaces a message is addressed to, read when needed. */
export interface SmimeKeys {
  identities: SmimeIdentity[];
  /** Why a workspace's key or certificate could not be used (file unreadable, no match), no key material. */
  problems: string[];
}

/**
 * The verdict on an S/MIME signature, as the message record keeps it (docs/architecture.md,
 * "Signed and encrypted mail"). `valid` means the signature verifies against the signer
 * certificate the message itself carries; whether that certificate is trusted (its chain, its
 * revocation) is not checked. `unverified`: the signature was not checked (no signer
 * certificate in the message, or a clear-signed message, whose detached signature is not read).
 */
export interface SmimeVerdict {
  signed: true;
  signature: 'valid' | 'invalid' | 'unverified';
  /** The signer certificate's e-mail address, else its subject; absent when none was found. */
  signer?: string;
}

export type OpenedSmime =
  | { kind: 'signed'; content: Buffer; verdict: SmimeVerdict }
  | {
      kind: 'decrypted';
      content: Buffer;
      /** The workspaces whose key opened it: its documents are theirs only. */
      workspaces: readonly string[];
    }
  /** Encrypted, and not decrypted: the reason starts with `encrypted_smime:`. */
  | { kind: 'enveloped'; reason: string }
  | { kind: 'unreadable'; reason: string };

/**
 * The S/MIME keys of the workspaces a message is addressed to, read when encrypted mail is
 * met; null when none of them has one.
 */
export type SmimeKeySource = (() => Promise<SmimeKeys>) | null;

/** Declared types of an S/MIME entity (RFC 8551 3.2; the x- form is what older clients and OpenSSL write). */
const SMIME_TYPES = new Set(['application/pkcs7-mime', 'application/x-pkcs7-mime']);
/** The detached signature of a clear-signed message (RFC 8551 3.5.3). */
const SIGNATURE_TYPES = new Set(['application/pkcs7-signature', 'application/x-pkcs7-signature']);

export function isSmimeEntity(declaredType: string): boolean {
  return SMIME_TYPES.has(declaredType);
}

export function isDetachedSignature(declaredType: string): boolean {
  return SIGNATURE_TYPES.has(declaredType);
}

/** The prefix of every reason an encrypted part is skipped with: the record's kind. */
export const ENCRYPTED_SMIME_KIND = 'encrypted_smime';

/** Why an encrypted S/MIME part is skipped: its reason in the record starts with the kind. */
export const ENCRYPTED_SMIME =
  'encrypted_smime: encrypted mail (S/MIME), which this server cannot decrypt: no workspace it is addressed to has an S/MIME key (smime)';
/** Why the .p7s of a clear-signed message is skipped. */
export const DETACHED_SIGNATURE = 'the signature of a signed message (S/MIME), not a document';
/**
 * Why an S/MIME part inside two S/MIME layers stays shut: signed-then-encrypted and
 * encrypted-then-signed mail are opened, deeper wrapping is not.
 */
export const NESTED_SMIME =
  'an S/MIME part inside two S/MIME layers, not opened (S/MIME is opened two layers deep)';

/** The record's reason for an S/MIME part that is not opened. */
export function smimeExclusion(opened: Extract<OpenedSmime, { kind: 'enveloped' | 'unreadable' }>): string {
  return opened.kind === 'enveloped'
    ? opened.reason
    : `an S/MIME part that cannot be opened: ${opened.reason}`;
}

/** Whether a part's exclusion says it is encrypted S/MIME that was not decrypted. */
export function isEncryptedSmime(exclusion: string | null): boolean {
  return exclusion?.startsWith(`${ENCRYPTED_SMIME_KIND}:`) === true;
}
