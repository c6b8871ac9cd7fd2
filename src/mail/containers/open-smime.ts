import { X509Certificate } from 'node:crypto';
import * as pkijs from 'pkijs';
import { AUTH_ENVELOPED_DATA, decryptEnveloped } from './decrypt-smime.ts';
import { ENCRYPTED_SMIME, type OpenedSmime, type SmimeKeySource, type SmimeVerdict } from './smime-entity.ts';

/** Verification errors of PKI.js that say no signer certificate could be found, so nothing was checked. */
const NO_SIGNER_CODES = new Set([1, 2, 3]);

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
