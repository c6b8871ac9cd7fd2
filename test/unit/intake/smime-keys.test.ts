import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { smimeKeySource } from '../../../src/intake/smime-keys.ts';

describe('smimeKeySource', () => {
  let dir: string;
  const file = (name: string) => join(dir, name);
  const makeKeyPair = (name: string) =>
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        `${name}-key.pem`,
        '-out',
        `${name}-cert.pem`,
        '-days',
        '2',
        '-subj',
        `/CN=${name}`,
      ],
      { cwd: dir, stdio: 'pipe' },
    );

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'smime-keys-'));
    makeKeyPair('a');
    makeKeyPair('b');
    writeFileSync(file('garbage.pem'), 'not a key');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is null when no workspace has a key', () => {
    expect(smimeKeySource([{ identifier: 'ws-1' }, { identifier: 'ws-2', smime: undefined }])).toBeNull();
  });

  it('reads each key and certificate once, for all the workspaces that name the same files', async () => {
    const files = { key: file('a-key.pem'), cert: file('a-cert.pem') };
    const source = smimeKeySource([
      { identifier: 'ws-1', smime: files },
      { identifier: 'ws-2', smime: { ...files } },
      { identifier: 'ws-3', smime: { key: file('b-key.pem'), cert: file('b-cert.pem') } },
    ]);
    const keys = await source?.();
    expect(keys?.problems).toEqual([]);
    expect(keys?.identities.map((identity) => [identity.workspaces, identity.certificate.subject])).toEqual([
      [['ws-1', 'ws-2'], 'CN=a'],
      [['ws-3'], 'CN=b'],
    ]);
    expect(await source?.()).toBe(keys);
  });

  it('names the file of a key that cannot be read, is not a key or is not the certificate’s, never its content', async () => {
    const keys = await smimeKeySource([
      { identifier: 'ws-missing', smime: { key: file('missing.pem'), cert: file('a-cert.pem') } },
      { identifier: 'ws-garbage', smime: { key: file('garbage.pem'), cert: file('a-cert.pem') } },
      { identifier: 'ws-mixed', smime: { key: file('b-key.pem'), cert: file('a-cert.pem') } },
      { identifier: 'ws-no-cert', smime: { key: file('a-key.pem'), cert: file('garbage.pem') } },
    ])?.();
    expect(keys?.identities).toEqual([]);
    expect(keys?.problems).toEqual([
      `smime.key ${file('missing.pem')} cannot be read (ENOENT) (workspace ws-missing)`,
      `smime.key ${file('garbage.pem')} is not an unencrypted PEM private key (workspace ws-garbage)`,
      `smime.key ${file('b-key.pem')} is not the key of the certificate ${file('a-cert.pem')} (workspace ws-mixed)`,
      `smime.cert ${file('garbage.pem')} is not a PEM certificate (workspace ws-no-cert)`,
    ]);
  });
});
