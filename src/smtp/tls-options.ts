import { readFile } from 'node:fs/promises';
import { createSecureContext } from 'node:tls';
import { asError } from '../errors.ts';
import type { SmtpSettings } from './smtp-settings-schema.ts';

/** What smtp-server takes for STARTTLS. */
export interface StartTlsOptions {
  key: Buffer;
  cert: Buffer;
  /**
   * TLS 1.0 and 1.1 are deprecated (RFC 8996); smtp-server's own default is TLSv1 for old
   * clients, but a sender that cannot do 1.2 can still deliver in clear unless requireTls.
   */
  minVersion: 'TLSv1.2';
  /** TLS 1.2 suites: FORWARD_SECRET_CIPHERS. TLS 1.3's own suites are all forward secret. */
  ciphers: string;
  /** The server's order wins, so a client offering both gets ECDHE with AEAD. */
  honorCipherOrder: true;
}

/**
 * The TLS 1.2 cipher suites offered, most preferred first: ephemeral (EC)DHE key exchange
 * only, so a recorded session cannot be decrypted with the certificate's key later (forward
 * secrecy), and AEAD ciphers only (no CBC, no SHA-1 MAC). The list of Mozilla's
 * "intermediate" TLS profile, which every MTA since about 2012 speaks; a client that cannot
 * still delivers without TLS unless smtp.requireTls.
 */
export const FORWARD_SECRET_CIPHERS = [
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
  'DHE-RSA-AES128-GCM-SHA256',
  'DHE-RSA-AES256-GCM-SHA384',
  'DHE-RSA-CHACHA20-POLY1305',
].join(':');

export type TlsConfig = SmtpSettings['tls'];

/**
 * Read the STARTTLS key and certificate named by smtp.tls, once at start, and check that
 * they make a context (a key that does not match its certificate fails here, not at the
 * first client's handshake). Null when no certificate is configured: STARTTLS is then not
 * offered at all, rather than with smtp-server's built-in certificate, whose private key is
 * public.
 */
export async function loadStartTlsOptions(tls: TlsConfig): Promise<StartTlsOptions | null> {
  if (tls === undefined) return null;
  const [key, cert] = await Promise.all([
    readPem(tls.key, 'smtp.tls.key'),
    readPem(tls.cert, 'smtp.tls.cert'),
  ]);
  const options: StartTlsOptions = {
    key,
    cert,
    minVersion: 'TLSv1.2',
    ciphers: FORWARD_SECRET_CIPHERS,
    honorCipherOrder: true,
  };
  try {
    createSecureContext(options);
  } catch (err) {
    throw new Error(
      `smtp.tls: ${tls.key} and ${tls.cert} do not make a TLS context: ${asError(err).message}`,
    );
  }
  return options;
}

async function readPem(path: string, name: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (err) {
    throw new Error(`${name}: cannot read ${path}: ${asError(err).message}`);
  }
}
