import { createHash } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startClamd, type TestClamd } from '../../harness/clamd.ts';
import { startRspamd, type TestRspamd } from '../../harness/rspamd.ts';
import { teeTo } from '../../src/intake/tee-stream.ts';
import { startClamdScan } from '../../src/scan/clamd-instream.ts';
import { startRspamdCheck } from '../../src/scan/rspamd-check.ts';
import type { ScannerRun } from '../../src/scan/scanner-run.ts';

const CHUNK = Buffer.alloc(64 * 1024, 'a');
/** 64 MiB: far more than the socket buffers between the gateway and a scanner hold. */
const CHUNKS = 1024;
const TOTAL = CHUNK.length * CHUNKS;

/**
 * The DATA stream as the intake reads it: a source counted as it is pulled, teed into a scanner
 * and into a sink standing for the store, which hashes everything it gets.
 */
function streamThrough(run: ScannerRun<unknown>) {
  let pulled = 0;
  let index = 0;
  const source = new Readable({
    read() {
      if (index === CHUNKS) return this.push(null);
      index += 1;
      pulled += CHUNK.length;
      this.push(CHUNK);
    },
  });
  const hash = createHash('sha256');
  let stored = 0;
  const store = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      stored += chunk.length;
      hash.update(chunk);
      callback();
    },
  });
  const done = pipeline(teeTo(source, run.input, Number.POSITIVE_INFINITY), store);
  return { pulled: () => pulled, stored: () => stored, digest: () => hash.digest('hex'), done };
}

const expectedDigest = (() => {
  const hash = createHash('sha256');
  for (let i = 0; i < CHUNKS; i++) hash.update(CHUNK);
  return hash.digest('hex');
})();

/**
 * A scanner that stops reading must hold the DATA stream back (the gateway never buffers the
 * message for it), and a scanner that hangs or dies mid-stream must not break the store write.
 */
describe('a scanner that does not keep up', () => {
  let clamd: TestClamd;
  let rspamd: TestRspamd;

  beforeAll(async () => {
    [clamd, rspamd] = await Promise.all([startClamd({ streamMaxLength: '100M' }), startRspamd()]);
  }, 180_000);
  afterAll(async () => {
    await Promise.all([clamd?.close(), rspamd?.close()]);
  });

  it('a hung clamd holds the stream back until its timeout, then the store gets every byte', async () => {
    clamd.freeze();
    try {
      const run = startClamdScan({ socket: clamd.socket, timeout: 2000 });
      const flow = streamThrough(run);
      const answer = await run.answer;
      // Pulled when the scanner gave up: what the socket buffers took, not the message.
      const pulledWhileHung = flow.pulled();
      expect(answer).toEqual({ kind: 'unavailable', reason: 'clamd did not answer within 2000 ms' });
      expect(pulledWhileHung).toBeLessThan(8 * 1024 * 1024);
      await flow.done;
      expect(flow.stored()).toBe(TOTAL);
      expect(flow.digest()).toBe(expectedDigest);
    } finally {
      clamd.thaw();
    }
  });

  it('a hung rspamd holds the stream back until its timeout, then the store gets every byte', async () => {
    rspamd.freeze();
    try {
      const run = startRspamdCheck(
        { url: rspamd.url, timeout: 2000 },
        {
          ip: '192.0.2.1',
          helo: 'client.test',
          mailFrom: 'a@acme.example',
          rcptTo: ['b@ingest.test'],
          queueId: 'q1',
        },
      );
      const flow = streamThrough(run);
      const answer = await run.answer;
      const pulledWhileHung = flow.pulled();
      expect(answer).toEqual({ kind: 'unavailable', reason: 'rspamd did not answer within 2000 ms' });
      // Loopback TCP buffers grow to a few MiB; the message is 64.
      expect(pulledWhileHung).toBeLessThan(16 * 1024 * 1024);
      await flow.done;
      expect(flow.stored()).toBe(TOTAL);
      expect(flow.digest()).toBe(expectedDigest);
    } finally {
      rspamd.thaw();
    }
  });

  it('clamd killed mid-stream is no answer, and the store still gets every byte', async () => {
    clamd.freeze();
    const run = startClamdScan({ socket: clamd.socket, timeout: 60_000 });
    const flow = streamThrough(run);
    // Frozen, clamd has taken what its socket buffers hold and no more: the stream waits on it.
    await clamd.kill();
    const answer = await run.answer;
    expect(answer.kind).toBe('unavailable');
    await flow.done;
    expect(flow.stored()).toBe(TOTAL);
    expect(flow.digest()).toBe(expectedDigest);
    await clamd.start();
  });
});
