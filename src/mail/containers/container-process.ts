import { fork } from 'node:child_process';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type ContainedEntry,
  ContainerError,
  type ContainerKind,
  type ContainerLimits,
} from './contained-file.ts';
import type { OpenRequest, WorkerReply } from './container-worker.ts';

export interface ContainerUnpackerOptions {
  /** Milliseconds the worker may take to produce its next entry (the first included); default STEP_TIMEOUT_MS. */
  stepTimeout?: number;
  /** The reader process's heap, in MB; default MAX_HEAP_MB. */
  maxHeapMb?: number;
  /** Milliseconds one container may take in all, its entries' storing included; default DEADLINE_MS. */
  deadline?: number;
  /** Containers opened at once in this process, others wait their turn; default CONCURRENCY. */
  concurrency?: number;
  /** Containers that may wait for their turn; default MAX_WAITING. */
  maxWaiting?: number;
}

/**
 * 10 s: a 20 MB container is read in well under a second, so only a reader caught in a loop
 * reaches it, and it is stopped there.
 */
const STEP_TIMEOUT_MS = 10_000;
/** 128 MB: a reader that keeps allocating is stopped there. */
const MAX_HEAP_MB = 128;
/** 60 s: the step deadline alone lets a container of maxParts entries run 100 steps long. */
const DEADLINE_MS = 60_000;
/** 2, one per core. */
const CONCURRENCY = 2;
/**
 * 8. Each waiter holds its container's bytes (up to smtp.maxPartSize) and its session, so the
 * list is bounded: past it, unpack rejects with ContainersBusyError, answered 451 4.3.0, and
 * the sending server retries later.
 */
const MAX_WAITING = 8;

/** Too many containers are waiting to be opened: a temporary failure, not a property of the message. */
export class ContainersBusyError extends Error {
  override name = 'ContainersBusyError';
}

export interface ContainerUnpacker {
  /**
   * Open a container and hand each entry to `onEntry` in order, waiting for it before the next
   * one is read. Rejects with ContainerError when the container cannot be opened (malformed,
   * past a bound, too slow, too hungry); entries handed over before that stay handed over.
   */
  unpack(
    kind: ContainerKind,
    bytes: Buffer,
    limits: ContainerLimits,
    onEntry: (entry: ContainedEntry) => Promise<void>,
  ): Promise<void>;
}

// The worker's file is beside this code: container-worker.ts beside the sources, and
// dist/container-worker.js beside the bundle's chunks (scripts/build.ts).
const workerPath = fileURLToPath(
  new URL(`./container-worker${extname(fileURLToPath(import.meta.url))}`, import.meta.url),
);

/**
 * Opens each container in a process of its own (container-worker.ts), a bounded number at a
 * time. Memory stays bounded: a container is at most smtp.maxPartSize (larger ones are not
 * stored, so never opened), the reader's heap is capped, and it hands over one file at a time.
 */
export function createContainerUnpacker(options: ContainerUnpackerOptions = {}): ContainerUnpacker {
  const stepTimeout = options.stepTimeout ?? STEP_TIMEOUT_MS;
  const maxHeapMb = options.maxHeapMb ?? MAX_HEAP_MB;
  const deadline = options.deadline ?? DEADLINE_MS;
  const concurrency = options.concurrency ?? CONCURRENCY;
  const maxWaiting = options.maxWaiting ?? MAX_WAITING;
  let running = 0;
  const waiting: Array<() => void> = [];

  async function turn(): Promise<() => void> {
    if (running >= concurrency) {
      if (waiting.length >= maxWaiting) {
        throw new ContainersBusyError(`${waiting.length} containers are already waiting to be opened`);
      }
      await new Promise<void>((resolve) => waiting.push(resolve));
    }
    running += 1;
    return () => {
      running -= 1;
      waiting.shift()?.();
    };
  }

  return {
    async unpack(kind, bytes, limits, onEntry) {
      const release = await turn();
      try {
        await runWorker({ kind, bytes, limits }, onEntry, { stepTimeout, deadline, maxHeapMb });
      } finally {
        release();
      }
    },
  };
}

function runWorker(
  request: OpenRequest,
  onEntry: (entry: ContainedEntry) => Promise<void>,
  bounds: { stepTimeout: number; deadline: number; maxHeapMb: number },
): Promise<void> {
  const { stepTimeout, deadline, maxHeapMb } = bounds;
  return new Promise((resolve, reject) => {
    const child = fork(workerPath, [], {
      // Its own flags, not the gateway's: a heap bound, and nothing inherited.
      execArgv: [`--max-old-space-size=${maxHeapMb}`],
      // Buffers cross as bytes, not as JSON arrays of numbers.
      serialization: 'advanced',
      // A reader's console output is not the gateway's log: dropped.
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    });
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const overall = setTimeout(
      () =>
        finish(
          new ContainerError(`reading it took longer than ${deadline / 1000} s in all, so it was stopped`),
        ),
      deadline,
    );
    const finish = (err: Error | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(overall);
      child.kill('SIGKILL');
      if (err) reject(err);
      else resolve();
    };
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(
        () =>
          finish(
            new ContainerError(`reading it took longer than ${stepTimeout / 1000} s, so it was stopped`),
          ),
        stepTimeout,
      );
    };
    child.on('message', (reply: WorkerReply) => {
      clearTimeout(timer);
      if (reply.type === 'done') return finish(null);
      if (reply.type === 'refused') return finish(new ContainerError(reply.reason));
      const within = reply.within === undefined ? {} : { within: reply.within };
      const entry: ContainedEntry =
        reply.type === 'file'
          ? {
              name: reply.name,
              ...within,
              declaredType: reply.declaredType,
              bytes: Buffer.from(reply.bytes.buffer, reply.bytes.byteOffset, reply.bytes.byteLength),
            }
          : { name: reply.name, ...within, size: reply.size, skip: reply.reason };
      onEntry(entry).then(
        () => {
          if (settled) return;
          arm();
          child.send('next');
        },
        (err: unknown) => finish(err instanceof Error ? err : new Error(String(err))),
      );
    });
    child.on('error', (err) => finish(new ContainerError(`its reader could not run: ${err.message}`)));
    child.on('exit', (code, signal) =>
      finish(
        new ContainerError(
          // V8 aborts (SIGABRT) when the heap bound is reached.
          signal === 'SIGABRT' || code === 134
            ? `reading it needed more than the ${maxHeapMb} MB this server allows, so it was stopped`
            : `its reader stopped (${signal ?? `exit code ${code}`})`,
        ),
      ),
    );
    arm();
    child.send(request);
  });
}
