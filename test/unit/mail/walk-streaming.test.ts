import { once } from 'node:events';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { defaultLimits } from '../../../harness/mail-fixtures.ts';
import { generatedMessage } from '../../../harness/mail-generated-message.ts';
import { createMemoryStore } from '../../../harness/mail-memory-store.ts';
import { walkMessage } from '../../../src/mail/walk-message.ts';

const MiB = 1024 * 1024;

/**
 * Let the streams run until `read()` stops changing: compare it every 10 event-loop turns,
 * at most 2,000 turns. Counts turns, not time, so a slow machine cannot fail it.
 */
async function untilQuiet(read: () => number): Promise<number> {
  let last = -1;
  for (let turn = 1; turn <= 2000; turn++) {
    await nextTurn();
    if (turn % 10 !== 0) continue;
    const now = read();
    if (now === last) return now;
    last = now;
  }
  throw new Error('the value never settled');
}

describe('walkMessage: streaming', () => {
  it('reads no further while the store has not taken a write (backpressure)', async () => {
    const message = generatedMessage(8 * MiB);
    const store = createMemoryStore({ keepBytes: false });
    store.holdWrites();
    const firstWrite = once(store.events, 'write', { signal: AbortSignal.timeout(10_000) });
    const walking = walkMessage(message.stream, store, defaultLimits);
    await firstWrite;

    const given = await untilQuiet(message.bytesGiven);
    // What the stream buffers hold (splitter, decoder) and the 256 KiB type-detection head,
    // nowhere near the 11 MB of the message.
    expect(given).toBeLessThan(3 * MiB);
    expect(given).toBeLessThan(message.totalBytes / 3);
    expect(store.parts.get(1)?.writes).toBe(1);

    store.releaseWrites();
    const result = await walking;
    expect(message.bytesGiven()).toBe(message.totalBytes);
    expect(result.parts[1]).toMatchObject({
      size: 8 * MiB,
      sha256: message.attachmentSha256(),
      stored: true,
    });
    expect(store.parts.get(1)).toMatchObject({
      state: 'ended',
      size: 8 * MiB,
      sha256: message.attachmentSha256(),
    });
  });

  it('streams a 30 MB attachment through without holding it', async () => {
    const message = generatedMessage(30 * MiB);
    const store = createMemoryStore({ keepBytes: false });
    const before = process.memoryUsage();
    let peakArrayBuffers = 0;
    let peakRss = 0;
    store.events.on('write', () => {
      const now = process.memoryUsage();
      peakArrayBuffers = Math.max(peakArrayBuffers, now.arrayBuffers - before.arrayBuffers);
      peakRss = Math.max(peakRss, now.rss - before.rss);
    });

    const result = await walkMessage(message.stream, store, { ...defaultLimits, maxPartSize: 64 * MiB });

    expect(result.parts[1]).toMatchObject({
      size: 30 * MiB,
      sha256: message.attachmentSha256(),
      stored: true,
    });
    // Coarse bounds, well above what streaming takes (about 2 MB) and below what holding
    // the part once (30 MB), let alone the 41 MB message, would show.
    expect(peakArrayBuffers).toBeLessThan(15 * MiB);
    expect(peakRss).toBeLessThan(30 * MiB);
  });
});
