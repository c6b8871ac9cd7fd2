import { X509Certificate } from 'node:crypto';
import * as pkijs from 'pkijs';
import {
  AUTH_ENVELOPED_DATA,
  decryptEnveloped,
  ENCRYPTED_SMIME_KIND,
  type SmimeKeys,
} from './decrypt-smime.ts';

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

/** Verification errors of PKI.js that say no signer certificate could be found, so nothing was checked. */
const NO_SIGNER_CODES = new Set([1, 2, 3]);

export function isSmimeEntity(declaredType: string): boolean {
  return SMIME_TYPES.has(declaredType);
}

export function isDetachedSignature(declaredType: string): boolean {
  return SIGNATURE_TYPES.has(declaredType);
}

/**
 * Open an S/MIME entity's bytes (a CMS ContentInfo, RFC 5652) with PKI.js: signed-data yields
 * its encapsulated content (a MIME entity) and the verdict on its first signature; enveloped
 * (encrypted) data yields its decrypted content when `keys` has the key it was encrypted to
 * (decrypt-smime.ts), else the reason it stays shut.
 */
export async function openSmime(der: Buffer, keys: SmimeKeySource = null): Promise<OpenedSmime> {
  let signed: pkijs.SignedData;
  try {
    const info = pkijs.ContentInfo.fromBER(der);
    if (info.contentType === pkijs.ContentInfo.ENVELOPED_DATA || info.contentType === AUTH_ENVELOPED_DATA) {
      if (keys === null) return { kind: 'enveloped', reason: ENCRYPTED_SMIME };
      const decrypted = decryptEnveloped(info, await keys());
      return decrypted.kind === 'decrypted'
        ? { kind: 'decrypted', content: decrypted.content, workspaces: decrypted.workspaces }
        : { kind: 'enveloped', reason: decrypted.reason };
    }
    if (info.contentType !== pkijs.ContentInfo.SIGNED_DATA) {
      return {
        kind: 'unreadable',
        reason: `CMS content of type ${info.contentType}, neither signed nor encrypted`,
      };
    }
    signed = new pkijs.SignedData({ schema: info.content });
  } catch (err) {
    return { kind: 'unreadable', reason: `not a readable CMS structure (${describe(err)})` };
  }
  const eContent = signed.encapContentInfo.eContent;
  if (eContent === undefined) {
    return { kind: 'unreadable', reason: 'signed data without the content it signs' };
  }
  const content = Buffer.from(eContent.getValue());
  return { kind: 'signed', content, verdict: await verdictOf(signed) };
}

async function verdictOf(signed: pkijs.SignedData): Promise<SmimeVerdict> {
  try {
    const result = await signed.verify({ signer: 0, checkChain: false, extendedMode: true });
    return verdict(result.signatureVerified === true ? 'valid' : 'invalid', result.signerCertificate);
  } catch (err) {
    if (!(err instanceof pkijs.SignedDataVerifyError)) return verdict('invalid', null);
    const checked = err.code === undefined || !NO_SIGNER_CODES.has(err.code);
    return verdict(checked ? 'invalid' : 'unverified', err.signerCertificate);
  }
}

function verdict(
  signature: SmimeVerdict['signature'],
  certificate: pkijs.Certificate | null | undefined,
): SmimeVerdict {
  const signer = certificate ? signerOf(certificate) : null;
  return signer === null ? { signed: true, signature } : { signed: true, signature, signer };
}

/** The certificate's e-mail address (subjectAltName rfc822Name, else the subject's emailAddress), else its subject. */
function signerOf(certificate: pkijs.Certificate): string | null {
  try {
    const x509 = new X509Certificate(Buffer.from(certificate.toSchema().toBER()));
    const email =
      /(?:^|,\s*)email:([^,\s]+)/.exec(x509.subjectAltName ?? '')?.[1] ??
      /(?:^|\n)emailAddress=([^\n]+)/.exec(x509.subject)?.[1];
    return email ?? x509.subject.replaceAll('\n', ', ');
  } catch {
    // A certificate Node cannot read still signed: the verdict stands without a name.
    return null;
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

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
