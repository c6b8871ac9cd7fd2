import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadStartTlsOptions } from '../../src/smtp/tls-options.ts';
import { type TestCertificate, testCertificate } from '../fixtures/tls/test-certificate.ts';

describe('loadStartTlsOptions', () => {
  let one: TestCertificate;
  let dir: string;
  /** A key of its own, made here: it belongs to no certificate. */
  let strayKey: string;

  beforeAll(async () => {
    one = await testCertificate();
    dir = await mkdtemp(join(tmpdir(), 'ingest-tls-key-'));
    strayKey = join(dir, 'stray.pem');
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    await writeFile(strayKey, privateKey.export({ type: 'pkcs8', format: 'pem' }));
  });
  afterAll(async () => {
    await one?.remove();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('offers no STARTTLS without a certificate', async () => {
    expect(await loadStartTlsOptions(undefined)).toBeNull();
  });

  it('reads the pair and sets TLS 1.2 as the least version (RFC 8996)', async () => {
    const options = await loadStartTlsOptions({ key: one.keyPath, cert: one.certPath });
    expect(options?.minVersion).toBe('TLSv1.2');
    expect(options?.cert.toString()).toContain('BEGIN CERTIFICATE');
  });

  it('names a file it cannot read', async () => {
    await expect(loadStartTlsOptions({ key: '/nonexistent/key.pem', cert: one.certPath })).rejects.toThrow(
      /^smtp\.tls\.key: cannot read \/nonexistent\/key\.pem: ENOENT/,
    );
  });

  it('refuses a key that does not belong to the certificate', async () => {
    await expect(loadStartTlsOptions({ key: strayKey, cert: one.certPath })).rejects.toThrow(
      /^smtp\.tls: .* do not make a TLS context: /,
    );
  });
});
