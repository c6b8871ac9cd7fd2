import { once } from 'node:events';
import { pipeline, type Readable, Transform, type Writable } from 'node:stream';

/**
 * `source`, passed through unchanged, with every chunk also written to `branch`: the DATA
 * stream feeds the store and the MIME walk as before, and sender authentication reads the
 * same bytes as they arrive instead of a second copy. Both sides keep their backpressure: a
 * chunk moves on once `branch` has taken it.
 *
 * `branch` gets at most `limit` bytes: past that it is destroyed with an error (the message
 * is refused as too large anyway, and mailauth buffers the header block, so a message
 * without a blank line would otherwise grow in memory). A branch that stops reading
 * (destroyed, or one that drops what it is given) never holds `source` up. An error or a
 * premature close of `source` destroys the returned stream and the branch.
 */
export function teeTo(
  source: Readable,
  branch: Writable,
  limit: number,
  /** Looks at each chunk before the branch does; an error it returns ends the branch. */
  inspect?: (chunk: Buffer) => Error | null,
): Readable {
  let fed = 0;
  const tee = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      if (branch.destroyed || branch.writableEnded) return callback(null, chunk);
      const refused = inspect?.(chunk) ?? null;
      if (refused) {
        branch.destroy(refused);
        return callback(null, chunk);
      }
      fed += chunk.length;
      if (fed > limit) {
        branch.destroy(new Error(`message exceeds ${limit} bytes; it is not authenticated`));
        return callback(null, chunk);
      }
      if (branch.write(chunk)) return callback(null, chunk);
      void drained(branch).then(() => callback(null, chunk));
    },
    flush(callback) {
      if (!branch.destroyed && !branch.writableEnded) branch.end();
      callback();
    },
  });
  pipeline(source, tee, (err) => {
    // pipeline has destroyed `tee` with the same error; the branch is not part of it.
    if (err && !branch.destroyed) branch.destroy(err);
  });
  return tee;
}

/** Resolves when `stream` can take more, or will never need to. */
async function drained(stream: Writable): Promise<void> {
  const controller = new AbortController();
  const { signal } = controller;
  await Promise.race([
    once(stream, 'drain', { signal }),
    once(stream, 'close', { signal }),
    // once() rejects on 'error'; either way the branch no longer holds the source.
  ]).catch(() => undefined);
  controller.abort();
}
