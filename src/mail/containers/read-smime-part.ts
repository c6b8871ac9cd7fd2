import type { OpenedSmime, SmimeKeySource } from './smime-entity.ts';

export interface ReadSmimePart {
  opened: OpenedSmime;
  /** The part's decoded bytes again, from the start, for recording it when it is not opened. */
  bytes: AsyncIterable<Buffer>;
}

/**
 * Read an S/MIME part (application/pkcs7-mime) as it is decoded and open it (open-smime.ts).
 * CMS is read whole, so the part is held in memory, at most `maxBytes` (smtp.maxPartSize): a
 * larger one is not opened, and its bytes stream on to be counted like any skipped part.
 */
export async function readSmimePart(
  decoded: AsyncIterable<Buffer>,
  maxBytes: number,
  keys: SmimeKeySource,
): Promise<ReadSmimePart> {
  const iterator = decoded[Symbol.asyncIterator]();
  const held: Buffer[] = [];
  let size = 0;
  for (;;) {
    const next = await iterator.next();
    if (next.done) break;
    held.push(next.value);
    size += next.value.length;
    if (size > maxBytes) {
      return {
        opened: { kind: 'unreadable', reason: `larger than the ${maxBytes} bytes this server opens` },
        bytes: replay(held, iterator),
      };
    }
  }
  const whole = Buffer.concat(held);
  // PKI.js is loaded with the first S/MIME entity to open, not at start (smime-entity.ts).
  const { openSmime } = await import('./open-smime.ts');
  return { opened: await openSmime(whole, keys), bytes: replay([whole], null) };
}

async function* replay(held: Buffer[], rest: AsyncIterator<Buffer> | null): AsyncGenerator<Buffer> {
  yield* held;
  if (rest === null) return;
  for (;;) {
    const next = await rest.next();
    if (next.done) return;
    yield next.value;
  }
}
