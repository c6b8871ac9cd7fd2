import {
  constants,
  createDecipheriv,
  type KeyObject,
  privateDecrypt,
  type X509Certificate,
} from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { ENCRYPTED_SMIME_KIND, type SmimeKeys } from './smime-entity.ts';

export type Decrypted =
  | { kind: 'decrypted'; content: Buffer; workspaces: readonly string[] }
  | { kind: 'undecryptable'; reason: string };

/** id-ct-authEnvelopedData (RFC 5083): what OpenSSL writes for AES-GCM. */
export const AUTH_ENVELOPED_DATA = '1.2.840.113549.1.9.16.1.23';

const RSA_ENCRYPTION = '1.2.840.113549.1.1.1';
const RSAES_OAEP = '1.2.840.113549.1.1.7';
const SUBJECT_KEY_IDENTIFIER = '2.5.29.14';

/** RSAES-OAEP hash algorithms (RFC 4055), as node:crypto names them. */
const OAEP_HASHES: Readonly<Record<string, string>> = {
  '1.3.14.3.2.26': 'sha1',
  '2.16.840.1.101.3.4.2.4': 'sha224',
  '2.16.840.1.101.3.4.2.1': 'sha256',
  '2.16.840.1.101.3.4.2.2': 'sha384',
  '2.16.840.1.101.3.4.2.3': 'sha512',
};

/** Content-encryption algorithms S/MIME clients use (RFC 8551 2.7, RFC 5084), as node:crypto names them. */
const CONTENT_CIPHERS: Readonly<Record<string, { name: string; keyLength: number; gcm: boolean }>> = {
  '2.16.840.1.101.3.4.1.2': { name: 'aes-128-cbc', keyLength: 16, gcm: false },
  '2.16.840.1.101.3.4.1.22': { name: 'aes-192-cbc', keyLength: 24, gcm: false },
  '2.16.840.1.101.3.4.1.42': { name: 'aes-256-cbc', keyLength: 32, gcm: false },
  '1.2.840.113549.3.7': { name: 'des-ede3-cbc', keyLength: 24, gcm: false },
  '2.16.840.1.101.3.4.1.6': { name: 'aes-128-gcm', keyLength: 16, gcm: true },
  '2.16.840.1.101.3.4.1.26': { name: 'aes-192-gcm', keyLength: 24, gcm: true },
  '2.16.840.1.101.3.4.1.46': { name: 'aes-256-gcm', keyLength: 32, gcm: true },
};

/** What an enveloped CMS structure holds, read by PKI.js (EnvelopedData) or here (AuthEnvelopedData). */
interface Envelope {
  recipientInfos: pkijs.RecipientInfo[];
  content: pkijs.EncryptedContentInfo;
  /** AuthEnvelopedData's message authentication code (the GCM tag), else null. */
  mac: Buffer | null;
  /** AuthEnvelopedData's authenticated attributes, DER with the SET OF tag (RFC 5083 2.2), else null. */
  aad: Buffer | null;
}

/**
 * Decrypt an S/MIME enveloped-data (RFC 5652 6) or authEnveloped-data (RFC 5083) structure
 * with the first identity it was encrypted to (matched by issuer and serial number or subject
 * key identifier). PKI.js reads the structure; the key is unwrapped and the content decrypted
 * with node:crypto, since WebCrypto, which PKI.js decrypts with, has no RSAES-PKCS1-v1_5: the
 * key transport Outlook, Thunderbird and OpenSSL use by default. RSA key transport only (an
 * EC certificate's key agreement is not decrypted).
 */
export function decryptEnveloped(info: pkijs.ContentInfo, keys: SmimeKeys): Decrypted {
  let envelope: Envelope;
  try {
    envelope = readEnvelope(info);
  } catch (err) {
    return undecryptable(`its encrypted structure cannot be read (${describe(err)})`);
  }
  if (keys.identities.length === 0) {
    return undecryptable(`the S/MIME key cannot be used: ${keys.problems.join('; ')}`);
  }
  for (const recipient of envelope.recipientInfos) {
    if (recipient.variant !== 1 || !(recipient.value instanceof pkijs.KeyTransRecipientInfo)) continue;
    const transport = recipient.value;
    const identity = keys.identities.find((each) => isRecipient(transport, each.certificate));
    if (identity === undefined) continue;
    try {
      const content = decryptContent(envelope, unwrapKey(transport, identity.key));
      return { kind: 'decrypted', content, workspaces: identity.workspaces };
    } catch (err) {
      return undecryptable(`it cannot be decrypted with the configured S/MIME key (${describe(err)})`);
    }
  }
  const agreement = envelope.recipientInfos.some((recipient) => recipient.variant === 2);
  return undecryptable(
    agreement && envelope.recipientInfos.every((recipient) => recipient.variant !== 1)
      ? 'it is encrypted by key agreement (an EC certificate), which this server does not decrypt'
      : 'it is encrypted for another certificate than the S/MIME certificate configured (smime.cert)',
  );
}

function undecryptable(why: string): Decrypted {
  return { kind: 'undecryptable', reason: `${ENCRYPTED_SMIME_KIND}: encrypted mail (S/MIME), ${why}` };
}

function readEnvelope(info: pkijs.ContentInfo): Envelope {
  if (info.contentType === pkijs.ContentInfo.ENVELOPED_DATA) {
    const enveloped = new pkijs.EnvelopedData({ schema: info.content });
    return {
      recipientInfos: enveloped.recipientInfos,
      content: enveloped.encryptedContentInfo,
      mac: null,
      aad: null,
    };
  }
  // AuthEnvelopedData ::= SEQUENCE { version, originatorInfo [0] OPTIONAL, recipientInfos SET,
  //   authEncryptedContentInfo, authAttrs [1] OPTIONAL, mac OCTET STRING, unauthAttrs [2] OPTIONAL }
  if (!(info.content instanceof asn1js.Sequence)) throw new Error('AuthEnvelopedData is not a SEQUENCE');
  const fields = info.content.valueBlock.value.filter((field) => !isContextTag(field, 0));
  const [, recipients, content, ...rest] = fields;
  if (!(recipients instanceof asn1js.Set) || !(content instanceof asn1js.Sequence)) {
    throw new Error('AuthEnvelopedData without recipients or content');
  }
  const authAttrs = rest.find((field) => isContextTag(field, 1)) ?? null;
  const mac = rest.find((field) => field instanceof asn1js.OctetString);
  if (!(mac instanceof asn1js.OctetString)) throw new Error('AuthEnvelopedData without its mac');
  let aad: Buffer | null = null;
  if (authAttrs !== null) {
    aad = Buffer.from(authAttrs.valueBeforeDecodeView);
    aad[0] = 0x31; // [1] IMPLICIT as the SET OF it is
  }
  return {
    recipientInfos: recipients.valueBlock.value.map((schema) => new pkijs.RecipientInfo({ schema })),
    content: new pkijs.EncryptedContentInfo({ schema: content }),
    mac: Buffer.from(mac.valueBlock.valueHexView),
    aad,
  };
}

function isContextTag(field: asn1js.AsnType, tag: number): boolean {
  return field.idBlock.tagClass === 3 && field.idBlock.tagNumber === tag;
}

/** Whether a key transport recipient names this certificate. */
function isRecipient(transport: pkijs.KeyTransRecipientInfo, certificate: X509Certificate): boolean {
  const cert = pkijs.Certificate.fromBER(certificate.raw);
  const rid = transport.rid;
  if (rid instanceof pkijs.IssuerAndSerialNumber) {
    return rid.issuer.isEqual(cert.issuer) && rid.serialNumber.isEqual(cert.serialNumber);
  }
  const keyId = cert.extensions?.find(
    (extension) => extension.extnID === SUBJECT_KEY_IDENTIFIER,
  )?.parsedValue;
  return (
    keyId instanceof asn1js.OctetString &&
    rid instanceof asn1js.OctetString &&
    Buffer.from(keyId.valueBlock.valueHexView).equals(Buffer.from(rid.valueBlock.valueHexView))
  );
}

/** The content-encryption key, unwrapped with the private key (RSAES-PKCS1-v1_5 or RSAES-OAEP). */
function unwrapKey(transport: pkijs.KeyTransRecipientInfo, key: KeyObject): Buffer {
  const encrypted = Buffer.from(transport.encryptedKey.valueBlock.valueHexView);
  const algorithm = transport.keyEncryptionAlgorithm;
  if (algorithm.algorithmId === RSA_ENCRYPTION) {
    // OpenSSL answers a wrong padding with a random key (implicit rejection), so a key that
    // does not fit shows as content that does not decrypt, not as a timing oracle.
    return privateDecrypt({ key, padding: constants.RSA_PKCS1_PADDING }, encrypted);
  }
  if (algorithm.algorithmId === RSAES_OAEP) {
    const params = new pkijs.RSAESOAEPParams({ schema: algorithm.algorithmParams });
    const hash = OAEP_HASHES[params.hashAlgorithm.algorithmId];
    if (hash === undefined) throw new Error(`RSAES-OAEP with hash ${params.hashAlgorithm.algorithmId}`);
    return privateDecrypt({ key, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: hash }, encrypted);
  }
  throw new Error(`key transport ${algorithm.algorithmId}, neither RSA PKCS #1 v1.5 nor RSAES-OAEP`);
}

function decryptContent(envelope: Envelope, contentKey: Buffer): Buffer {
  const algorithm = envelope.content.contentEncryptionAlgorithm;
  const cipher = CONTENT_CIPHERS[algorithm.algorithmId];
  if (cipher === undefined) throw new Error(`content encrypted with ${algorithm.algorithmId}`);
  if (contentKey.length !== cipher.keyLength) throw new Error('the unwrapped key has the wrong length');
  if (envelope.content.encryptedContent === undefined) throw new Error('no encrypted content');
  const encrypted = Buffer.from(envelope.content.getEncryptedContent());
  if (!cipher.gcm) {
    if (!(algorithm.algorithmParams instanceof asn1js.OctetString)) throw new Error('no IV');
    const iv = Buffer.from(algorithm.algorithmParams.valueBlock.valueHexView);
    const decipher = createDecipheriv(cipher.name, contentKey, iv);
    return Buffer.concat([decipher.update(encrypted), decipher.final()]);
  }
  // GCMParameters ::= SEQUENCE { aes-nonce OCTET STRING, aes-ICVlen INTEGER DEFAULT 12 } (RFC 5084)
  const params = algorithm.algorithmParams;
  const nonce = params instanceof asn1js.Sequence ? params.valueBlock.value[0] : undefined;
  if (!(nonce instanceof asn1js.OctetString)) throw new Error('no GCM nonce');
  if (envelope.mac === null) throw new Error('AES-GCM outside AuthEnvelopedData, without its tag');
  const decipher = createDecipheriv(
    cipher.name as 'aes-128-gcm',
    contentKey,
    Buffer.from(nonce.valueBlock.valueHexView),
    { authTagLength: envelope.mac.length },
  );
  decipher.setAuthTag(envelope.mac);
  if (envelope.aad !== null) decipher.setAAD(envelope.aad);
  return Buffer.concat([decipher.update(encrypted), decipher.final()]);
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
