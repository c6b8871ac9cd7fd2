import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { asError } from '../errors.ts';
import type { SmimeIdentity, SmimeKeySource, SmimeKeys } from '../mail/containers/smime-entity.ts';
import type { SmimeFiles } from './intake-settings-schema.ts';

/** A workspace as far as its S/MIME key goes. */
export interface SmimeWorkspace {
  readonly identifier: string;
  readonly smime?: SmimeFiles | undefined;
}

/**
 * The S/MIME keys of the workspaces a message is addressed to (their `smime` key and
 * certificate files), read once for the message when the walk meets encrypted mail, so a
 * renewed key or certificate is used from the next message on; null when none has one.
 * Workspaces naming the same two files share one identity. A file that cannot be read, a key
 * that is not PEM, or a key that does not belong to its certificate is a problem named in the
 * skipped part's reason (by file and workspace, never by content), not a failure of the message.
 */
export function smimeKeySource(workspaces: readonly SmimeWorkspace[]): SmimeKeySource {
  const groups = new Map<string, { files: SmimeFiles; workspaces: string[] }>();
  for (const workspace of workspaces) {
    if (workspace.smime === undefined) continue;
    const id = JSON.stringify([workspace.smime.key, workspace.smime.cert]);
    const group = groups.get(id) ?? { files: workspace.smime, workspaces: [] };
    group.workspaces.push(workspace.identifier);
    groups.set(id, group);
  }
  if (groups.size === 0) return null;
  let keys: Promise<SmimeKeys> | null = null;
  return () => {
    keys ??= readKeys([...groups.values()]);
    return keys;
  };
}

async function readKeys(groups: { files: SmimeFiles; workspaces: string[] }[]): Promise<SmimeKeys> {
  const identities: SmimeIdentity[] = [];
  const problems: string[] = [];
  for (const group of groups) {
    try {
      identities.push({ workspaces: group.workspaces, ...(await readIdentity(group.files)) });
    } catch (err) {
      problems.push(`${asError(err).message} (workspace ${group.workspaces.join(', ')})`);
    }
  }
  return { identities, problems };
}

async function readIdentity(files: SmimeFiles): Promise<Omit<SmimeIdentity, 'workspaces'>> {
  const [keyPem, certPem] = await Promise.all([read(files.key, 'smime.key'), read(files.cert, 'smime.cert')]);
  let key: SmimeIdentity['key'];
  try {
    key = createPrivateKey(keyPem);
  } catch {
    // The parser's message may quote what it read: only the file is named.
    throw new Error(`smime.key ${files.key} is not an unencrypted PEM private key`);
  }
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(certPem);
  } catch {
    throw new Error(`smime.cert ${files.cert} is not a PEM certificate`);
  }
  if (!certificate.checkPrivateKey(key)) {
    throw new Error(`smime.key ${files.key} is not the key of the certificate ${files.cert}`);
  }
  return { key, certificate };
}

async function read(path: string, name: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? asError(err).message;
    throw new Error(`${name} ${path} cannot be read (${code})`);
  }
}
