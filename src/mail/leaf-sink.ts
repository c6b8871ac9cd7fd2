import type { Readable, Transform } from 'node:stream';
import { asError } from '../errors.ts';

/**
 * Where the walk puts one leaf's raw (transfer-encoded) body: a decoder whose output is read
 * by a consumer running alongside the walk, either collectLeaf or, for an attached message,
 * a nested walk. Every `write` waits while the decoder is full, and the decoder stays full
 * while the consumer waits for the store, so a slow store stops the walk from reading on.
 */
export interface LeafSink {
  /** Feed raw body bytes; resolves when the decoder can take more. Rejects once the consumer failed. */
  write(raw: Buffer): Promise<void>;
  /** The body is complete: resolves when the consumer has read and handled all of it. */
  end(): Promise<void>;
  /** Stop: the consumer sees its input close and cleans up (discarding what it stored). */
  abort(): Promise<void>;
}

/**
 * @param consume reads `decoded` to its end; its rejection fails the sink.
 * @param onFailure told as soon as the consumer fails, so the walk can stop reading input
 *   at once instead of at the next write to this sink.
 */
export function createDecodingSink(
  decoder: Transform,
  consume: (decoded: Readable) => Promise<void>,
  onFailure: (err: Error) => void,
): LeafSink {
  let failure: Error | null = null;
  // Never rejects, so no rejection goes unhandled while the walk is busy elsewhere.
  const settled = consume(decoder).then(
    () => undefined,
    (err: unknown) => {
      failure = asError(err);
      decoder.destroy();
      onFailure(failure);
    },
  );

  const throwIfStopped = async () => {
    if (!decoder.destroyed) return;
    await settled;
    throw failure ?? new Error('the part decoder closed before the part ended');
  };

  return {
    async write(raw) {
      await throwIfStopped();
      if (!decoder.write(raw)) await drainOrClose(decoder);
      await throwIfStopped();
    },
    async end() {
      await throwIfStopped();
      decoder.end();
      await settled;
      if (failure !== null) throw failure;
    },
    async abort() {
      decoder.destroy();
      await settled;
    },
  };
}

/** Resolves when `stream` wants more input or has closed (after a failure, or an abort). */
function drainOrClose(stream: Transform): Promise<void> {
  if (stream.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done);
      stream.off('close', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('close', done);
  });
}
