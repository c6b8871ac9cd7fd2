import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { defaultLimits } from '../../../harness/mail-fixtures.ts';
import { createMemoryStore } from '../../../harness/mail-memory-store.ts';
import { zipArchive } from '../../../harness/zip-archive.ts';
import { walkMessage } from '../../../src/mail/walk-message.ts';

/** ZIP archives reach the part store during DATA only for a workspace that unpacks them (storeArchives). */

const zip = zipArchive([['notes.txt', Buffer.from('Invoice 17, due in 30 days.')]]);
const message = Buffer.from(
  [
    'From: Ann <ann@acme.example>',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="m"',
    '',
    '--m',
    'Content-Type: text/plain',
    '',
    'Attached.',
    '--m',
    'Content-Type: application/zip; name="notes.zip"',
    'Content-Disposition: attachment; filename="notes.zip"',
    'Content-Transfer-Encoding: base64',
    '',
    zip.toString('base64'),
    '--m--',
    '',
  ].join('\r\n'),
);

async function walk(storeArchives: boolean | undefined) {
  const store = createMemoryStore();
  const result = await walkMessage(Readable.from([message]), store, defaultLimits, { storeArchives });
  const archive = result.parts.find((part) => part.fileName === 'notes.zip');
  return { archive, stored: [...store.parts.keys()] };
}

describe('walkMessage: ZIP archives (storeArchives)', () => {
  it('stores the archive to be opened after DATA when asked', async () => {
    const { archive, stored } = await walk(true);
    expect(archive?.stored).toBe(true);
    expect(stored).toEqual([archive?.index]);
    expect(archive?.container).toEqual({ kind: 'zip', outcome: 'a ZIP archive, not opened' });
  });

  it.each([
    ['false', false],
    ['absent', undefined],
  ])('only counts the archive when storeArchives is %s, and says why it stays shut', async (_case, flag) => {
    const { archive, stored } = await walk(flag);
    expect(archive?.stored).toBe(false);
    expect(archive?.size).toBe(zip.length);
    expect(stored).toEqual([]);
    expect(archive?.container?.outcome).toBe(
      'a ZIP archive, not opened: no workspace it is addressed to sets archives: unpack',
    );
  });
});
