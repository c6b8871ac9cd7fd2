import { execFileSync } from 'node:child_process';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSmime } from '../../../../src/mail/containers/open-smime.ts';
import type { SmimeKeys } from '../../../../src/mail/containers/smime-entity.ts';

/** Encrypted CMS made by `openssl cms -encrypt` here, opened with keys OpenSSL made for the test. */
describe('openSmime on encrypted data', () => {
  let dir: string;
  let keys: SmimeKeys;
  const content = Buffer.from('Content-Type: text/plain\r\n\r\nThe invoice.\r\n');
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const encrypt = (cert: string, ...args: string[]) => {
    openssl(
      'cms',
      '-encrypt',
      '-in',
      'content.txt',
      '-outform',
      'DER',
      '-out',
      'out.der',
      '-recip',
      cert,
      ...args,
    );
    return readFileSync(join(dir, 'out.der'));
  };
  const open = (der: Buffer, using: SmimeKeys = keys) => openSmime(der, async () => using);

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'decrypt-smime-'));
    writeFileSync(join(dir, 'content.txt'), content);
    const subject = ['-days', '2', '-nodes', '-subj', '/CN=ingest'];
    openssl('req', '-x509', '-newkey', 'rsa:2048', '-keyout', 'key.pem', '-out', 'cert.pem', ...subject);
    openssl(
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-keyout',
      'ec-key.pem',
      '-out',
      'ec-cert.pem',
      ...subject,
    );
    keys = {
      identities: [
        {
          workspaces: ['ws-1'],
          key: createPrivateKey(readFileSync(join(dir, 'key.pem'))),
          certificate: new X509Certificate(readFileSync(join(dir, 'cert.pem'))),
        },
      ],
      problems: [],
    };
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('yields the content, byte for byte, and the workspaces whose key opened it', async () => {
    expect(await open(encrypt('cert.pem', '-aes-256-gcm'))).toEqual({
      kind: 'decrypted',
      content,
      workspaces: ['ws-1'],
    });
  });

  it('says why when AES-GCM content does not match its tag', async () => {
    const gcm = encrypt('cert.pem', '-aes-256-gcm');
    const at = gcm.length - 20; // inside the 16-byte tag at the end
    gcm[at] = (gcm[at] ?? 0) ^ 0xff;
    expect(await open(gcm)).toEqual({
      kind: 'enveloped',
      reason: expect.stringMatching(
        /^encrypted_smime: encrypted mail \(S\/MIME\), it cannot be decrypted with the configured S\/MIME key \(/,
      ),
    });
  });

  it('says when the mail is encrypted by key agreement (an EC certificate)', async () => {
    expect(await open(encrypt('ec-cert.pem'))).toEqual({
      kind: 'enveloped',
      reason:
        'encrypted_smime: encrypted mail (S/MIME), it is encrypted by key agreement (an EC certificate), which this server does not decrypt',
    });
  });

  it('passes on why no key could be used', async () => {
    const none: SmimeKeys = {
      identities: [],
      problems: ['smime.key /k.pem cannot be read (ENOENT) (workspace ws-1)'],
    };
    expect(await open(encrypt('cert.pem'), none)).toEqual({
      kind: 'enveloped',
      reason:
        'encrypted_smime: encrypted mail (S/MIME), the S/MIME key cannot be used: smime.key /k.pem cannot be read (ENOENT) (workspace ws-1)',
    });
  });

  it('leaves encrypted data shut, unread, when no workspace has a key', async () => {
    expect(await openSmime(encrypt('cert.pem'), null)).toEqual({
      kind: 'enveloped',
      reason:
        'encrypted_smime: encrypted mail (S/MIME), which this server cannot decrypt: no workspace it is addressed to has an S/MIME key (smime)',
    });
  });
});
