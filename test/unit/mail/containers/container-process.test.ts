import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ContainedEntry } from '../../../../src/mail/containers/contained-file.ts';
import { ContainerError } from '../../../../src/mail/containers/contained-file.ts';
import {
  ContainersBusyError,
  createContainerUnpacker,
} from '../../../../src/mail/containers/container-process.ts';

const container = (name: string) =>
  readFileSync(new URL(`../../../fixtures/containers/${name}`, import.meta.url));
const limits = { maxEntries: 100, maxFileSize: 20_000_000, maxTotalSize: 80_000_000, maxRatio: 100 };

/** A step bound out of reach unless given: these tests are about what is read, not when it stops. */
async function open(kind: 'tnef' | 'outlook-item' | 'zip', bytes: Buffer, stepTimeout = 600_000) {
  const entries: ContainedEntry[] = [];
  const unpacker = createContainerUnpacker({ stepTimeout });
  await unpacker.unpack(kind, bytes, limits, async (entry) => {
    entries.push(entry);
  });
  return entries.map((entry) =>
    'skip' in entry ? `${entry.name}: ${entry.skip}` : `${entry.name}: ${entry.bytes.length}`,
  );
}

describe('createContainerUnpacker', () => {
  it('opens an Outlook item in a process of its own and hands over each attachment', async () => {
    expect(await open('outlook-item', container('forwarded.msg'))).toEqual([
      'Rechnung März.pdf: 583',
      'contract.docx: 918',
      'logo.gif: 405',
    ]);
  });

  it('stops a reader that keeps allocating on a looping FAT at its heap bound', {
    timeout: 120_000,
  }, async () => {
    // Time bounds out of reach, so only the heap bound can stop it, however busy the cores;
    // a small heap, reached in seconds.
    const unpacker = createContainerUnpacker({ maxHeapMb: 32, stepTimeout: 600_000, deadline: 600_000 });
    const failure = await unpacker
      .unpack('outlook-item', container('broken-fat.msg'), limits, async () => undefined)
      .catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(ContainerError);
    expect(String(failure)).toBe(
      'ContainerError: reading it needed more than the 32 MB this server allows, so it was stopped',
    );
  });

  it('stops a reader that takes longer than a step may', { timeout: 30_000 }, async () => {
    // 1 ms for a step: no reader starts that fast, so the deadline is what ends it.
    const failure = await open('zip', container('invoices.zip'), 1).catch((err: unknown) => err);
    expect(String(failure)).toBe('ContainerError: reading it took longer than 0.001 s, so it was stopped');
  });

  it('stops a container that takes longer than its overall deadline, however quick each step', {
    timeout: 30_000,
  }, async () => {
    const unpacker = createContainerUnpacker({ deadline: 1 });
    const failure = await unpacker
      .unpack('zip', container('invoices.zip'), limits, async () => undefined)
      .catch((err: unknown) => err);
    expect(String(failure)).toBe(
      'ContainerError: reading it took longer than 0.001 s in all, so it was stopped',
    );
  });

  it('answers busy past the waiting list, and opens the containers it let wait', {
    timeout: 30_000,
  }, async () => {
    const unpacker = createContainerUnpacker({ concurrency: 1, maxWaiting: 1 });
    const run = () => {
      const names: string[] = [];
      return unpacker
        .unpack('zip', container('invoices.zip'), limits, async (entry) => {
          names.push(entry.name ?? '');
        })
        .then(() => names.length);
    };
    const [running, waiting, turnedAway] = await Promise.allSettled([run(), run(), run()]);
    expect(running).toEqual({ status: 'fulfilled', value: 3 });
    expect(waiting).toEqual({ status: 'fulfilled', value: 3 });
    expect(turnedAway.status === 'rejected' && turnedAway.reason).toBeInstanceOf(ContainersBusyError);
  });

  it('refuses a directory that states a stream larger than the file before msgreader reads it', async () => {
    const lying = Buffer.from(container('forwarded.msg'));
    const directory = (lying.readUInt32LE(48) + 1) * 512;
    lying.writeUInt32LE(0xffffff00, directory + 128 + 120);
    await expect(open('outlook-item', lying)).rejects.toThrow(/larger than the file/);
  });

  it.each([
    ['a zip bomb', 'bomb.zip', /inflates \d+ times its compressed size.*zip bomb/],
    ['10,000 entries', 'many-entries.zip', /it holds 10000 entries, more than the 100/],
  ])('refuses %s before inflating anything', async (_case, file, reason) => {
    await expect(open('zip', container(file))).rejects.toThrow(reason);
  });

  it('skips an encrypted entry and takes the rest', async () => {
    expect(await open('zip', container('encrypted.zip'))).toEqual([
      'readme.txt: 125',
      'secret.pdf: encrypted in the archive, so it cannot be read',
    ]);
  });
});
