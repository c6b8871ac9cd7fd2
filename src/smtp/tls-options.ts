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
}

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
  const options: StartTlsOptions = { key, cert, minVersion: 'TLSv1.2' };
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
