import { generateKeyPairSync } from 'node:crypto';
import { authenticate, sealMessage } from 'mailauth';
import { dkimSign } from 'mailauth/lib/dkim/sign.js';
import type { DnsResolver } from '../src/sender/dns-resolver.ts';
import type { FakeDns } from './dns-fake.ts';

/** A signing key made for one test run, and the DNS record that publishes it. */
export interface SigningKey {
  domain: string;
  selector: string;
  privateKey: string;
  /** `<selector>._domainkey.<domain>` */
  recordName: string;
  /** The TXT record: `v=DKIM1; k=…; p=…`. */
  record: string;
}

/**
 * A fresh key (RSA 2048 or Ed25519) for `selector._domainkey.domain`, published in `dns`.
 * Nothing is read from disk: each run signs with keys nobody else has.
 */
export function createSigningKey(
  dns: FakeDns,
  domain: string,
  selector: string,
  type: 'rsa' | 'ed25519' = 'rsa',
): SigningKey {
  const { privateKey, publicKey } =
    type === 'rsa' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : generateKeyPairSync('ed25519');
  const der = publicKey.export({ type: 'spki', format: 'der' });
  // An Ed25519 key record holds the raw 32-byte key (RFC 8463 §4.2), not the SPKI structure.
  const p = (type === 'rsa' ? der : der.subarray(der.length - 32)).toString('base64');
  const key: SigningKey = {
    domain,
    selector,
    privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    recordName: `${selector}._domainkey.${domain}`,
    record: `v=DKIM1; k=${type}; p=${p}`,
  };
  dns.set('TXT', key.recordName, [key.record]);
  return key;
}

/**
 * `message` with a DKIM-Signature by `key` on top. `bodyLength: 'l='` adds an l= tag that
 * covers the body as it is now, so anything appended later is unsigned.
 */
export async function dkimSignMessage(
  message: Buffer,
  key: SigningKey,
  options: { bodyLength?: 'l=' } = {},
): Promise<Buffer> {
  const signature = {
    signingDomain: key.domain,
    selector: key.selector,
    privateKey: key.privateKey,
    // The signer writes l= as the bytes it hashed: the whole body, when that is shorter.
    ...(options.bodyLength ? { maxBodyLength: Number.MAX_SAFE_INTEGER } : {}),
  };
  // mailauth signs what signatureData lists; its type also asks for one signature's fields.
  const signed = await dkimSign(message, { ...signature, signatureData: [signature] });
  if (signed.errors.length > 0) throw new Error(`dkimSign: ${JSON.stringify(signed.errors)}`);
  return Buffer.concat([Buffer.from(signed.signatures), message]);
}

export interface ArcHop {
  /** The ARC sealer's key: its domain is the seal's d=. */
  key: SigningKey;
  /** How the message reached the sealer: the client IP, HELO name and MAIL FROM it saw. */
  ip: string;
  helo: string;
  mailFrom: string;
  /** What the sealer changes before it seals and passes the message on (a subject tag, a footer). */
  modify?: (message: string) => string;
}

/**
 * What a forwarder or mailing list does (RFC 8617 §5.1): authenticate the message as it
 * arrives, change it, and add an ARC set (ARC-Authentication-Results with its results,
 * ARC-Message-Signature, ARC-Seal) that continues the chain already on the message.
 */
export async function arcForward(message: Buffer, hop: ArcHop, resolver: DnsResolver): Promise<Buffer> {
  const arrived = await authenticate(message, {
    ip: hop.ip,
    helo: hop.helo,
    sender: hop.mailFrom,
    mta: hop.key.domain,
    resolver,
    disableBimi: true,
  });
  if (!arrived.arc) throw new Error('mailauth returned no ARC result to continue');
  const chainValid = arrived.arc.status.result;
  const changed = Buffer.from((hop.modify ?? ((text) => text))(message.toString('latin1')), 'latin1');
  const seal = await sealMessage(changed, {
    signingDomain: hop.key.domain,
    selector: hop.key.selector,
    privateKey: hop.key.privateKey,
    authResults: arrived.arc.authResults ?? `${hop.key.domain}; none`,
    cv: chainValid === 'pass' ? 'pass' : 'none',
  });
  if (seal.length === 0) throw new Error('sealMessage created no ARC set');
  return Buffer.concat([seal, changed]);
}
