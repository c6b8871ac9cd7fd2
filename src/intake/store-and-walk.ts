import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { PassThrough, type Readable } from 'node:stream';
import { RefusalError } from '../errors.ts';
import { type WalkOptions, type WalkResult, walkMessage } from '../mail/walk-message.ts';
import type { IncomingMessage } from '../store/message-store.ts';
import { createBareLineEndingScanner, describeBareLineEnding } from './bare-line-ending.ts';

export interface Stored {
  walk: WalkResult;
  rawSha256: string;
  size: number;
}

/**
 * Tee the DATA stream into the raw copy and the MIME walk, each with backpressure. Once the
 * message is refused (too large, a bare CR or LF, a walk limit) or storing fails, the rest of
 * DATA is read and dropped, and the reason is thrown after the stream ends.
 */
export async function storeAndWalk(
  stream: Readable,
  incoming: IncomingMessage,
  limits: Parameters<typeof walkMessage>[2],
  walkOptions: WalkOptions,
  maxMessageSize: number,
  rejectBareLineEndings: boolean,
  /** Called once, when the message is refused while it streams. */
  onStop: () => void,
): Promise<Stored> {
  const walkInput = new PassThrough({ highWaterMark: 64 * 1024 });
  const walking = walkMessage(walkInput, incoming.parts, limits, walkOptions);
  let stopped: unknown;
  /** The first reason wins; the walk and the authentication branch end at once. */
  const stop = (reason: unknown) => {
    if (stopped !== undefined) return;
    stopped = reason;
    walkInput.destroy();
    onStop();
  };
  walking.catch(stop);
  const hash = createHash('sha256');
  let size = 0;
  const lineEndings = rejectBareLineEndings ? createBareLineEndingScanner() : null;
  const refuseBare = (found: 'cr' | 'lf') =>
    new RefusalError('BARE_LINE_ENDING', describeBareLineEnding(found));

  for await (const chunk of stream as AsyncIterable<Buffer>) {
    if (stopped !== undefined) continue;
    size += chunk.length;
    if (size > maxMessageSize) {
      stop(
        new RefusalError(
          'MESSAGE_TOO_LARGE',
          `message exceeds the ${maxMessageSize} bytes this server takes`,
        ),
      );
      continue;
    }
    // Checked before the chunk is stored: smuggled commands never reach Redis.
    const bare = lineEndings?.push(chunk) ?? null;
    if (bare !== null) {
      stop(refuseBare(bare));
      continue;
    }
    hash.update(chunk);
    try {
      await incoming.raw.write(chunk);
      if (!walkInput.write(chunk))
        await Promise.race([once(walkInput, 'drain'), walking.catch(() => undefined)]);
    } catch (err) {
      stop(err);
    }
  }
  const bareAtEnd = lineEndings?.end() ?? null;
  if (bareAtEnd !== null) stop(refuseBare(bareAtEnd));
  if (stopped !== undefined) throw stopped;
  walkInput.end();
  await incoming.raw.end();
  const walk = await walking;
  return { walk, rawSha256: hash.digest('hex'), size };
}
