import {
  type ContainedEntry,
  ContainerError,
  type ContainerKind,
  type ContainerLimits,
} from './contained-file.ts';
import { readOutlookItem } from './read-outlook-item.ts';
import { readTnef } from './read-tnef.ts';
import { readZip } from './read-zip.ts';

/**
 * The process a container is opened in (see container-process.ts): whatever the bytes make a
 * reader do, it is this process that the deadline and the heap limit stop, never the gateway.
 * A process, not a worker thread: a worker that fills its heap by growing one array aborts
 * the whole process instead of ending alone (nodejs/node#47224), and a hostile .msg makes
 * msgreader do exactly that.
 *
 * Protocol: the parent sends one OpenRequest; this process answers with one WorkerReply per
 * entry and waits for `next` before reading on, so at most one file is in flight; then
 * `done`, or `refused` with the reason the container cannot be opened.
 */
export interface OpenRequest {
  kind: ContainerKind;
  bytes: Uint8Array;
  limits: ContainerLimits;
}

export type WorkerReply =
  | { type: 'file'; name: string | null; within?: string; declaredType: string | null; bytes: Uint8Array }
  | { type: 'skip'; name: string | null; within?: string; size: number; reason: string }
  | { type: 'done' }
  | { type: 'refused'; reason: string };

function reply(message: WorkerReply): void {
  process.send?.(message);
}

process.once('message', (request: OpenRequest) => {
  void open(request).then(
    () => reply({ type: 'done' }),
    (err: unknown) =>
      reply({
        type: 'refused',
        reason: err instanceof ContainerError ? err.message : `it cannot be read: ${String(err)}`,
      }),
  );
});
// The parent going away (it closed, or it gave up on this container) ends this process. This
// file is the entry point of the child process that opens containers, so it is that process's
// composition root and the one place there that may exit.
process.once('disconnect', () => process.exit(0));

async function open({ kind, bytes, limits }: OpenRequest): Promise<void> {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const entries: Iterable<ContainedEntry> | AsyncIterable<ContainedEntry> =
    kind === 'zip'
      ? readZip(buffer, limits)
      : kind === 'tnef'
        ? readTnef(buffer, limits)
        : readOutlookItem(buffer, limits);
  for await (const entry of entries) {
    const within = entry.within === undefined ? {} : { within: entry.within };
    if ('skip' in entry)
      reply({ type: 'skip', name: entry.name, ...within, size: entry.size, reason: entry.skip });
    else
      reply({
        type: 'file',
        name: entry.name,
        ...within,
        declaredType: entry.declaredType,
        bytes: entry.bytes,
      });
    await nextRequested();
  }
}

function nextRequested(): Promise<void> {
  return new Promise((resolve) => process.once('message', () => resolve()));
}
