import { once } from 'node:events';
import { PassThrough, Readable, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { teeTo } from '../../../src/intake/tee-stream.ts';

const chunks = Array.from({ length: 40 }, (_, index) => Buffer.alloc(4096, index));
const whole = Buffer.concat(chunks);

async function readAll(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of stream as AsyncIterable<Buffer>) parts.push(chunk);
  return Buffer.concat(parts);
}

/** A branch that takes one chunk per macrotask, so the tee must wait for it. */
function slowBranch(): { stream: Writable; received: Buffer[]; writesWhileFull: () => number } {
  const received: Buffer[] = [];
  let full = 0;
  const stream = new Writable({
    highWaterMark: 1024,
    write(chunk: Buffer, _encoding, callback) {
      received.push(chunk);
      setImmediate(callback);
    },
  });
  const write = stream.write.bind(stream);
  stream.write = ((chunk: Buffer) => {
    if (stream.writableNeedDrain) full++;
    return write(chunk);
  }) as typeof stream.write;
  return { stream, received, writesWhileFull: () => full };
}

describe('teeTo', () => {
  it('passes every byte through and gives the branch the same bytes, waiting for it', async () => {
    const branch = slowBranch();
    const finished = once(branch.stream, 'finish');
    const out = await readAll(teeTo(Readable.from(chunks), branch.stream, Number.MAX_SAFE_INTEGER));
    await finished;
    expect(out.equals(whole)).toBe(true);
    expect(Buffer.concat(branch.received).equals(whole)).toBe(true);
    // Backpressure: nothing was written while the branch asked the writer to wait.
    expect(branch.writesWhileFull()).toBe(0);
  });

  it('keeps the source flowing when the branch is destroyed half-way', async () => {
    const branch = new PassThrough({ highWaterMark: 1024 });
    let taken = 0;
    branch.on('data', (chunk: Buffer) => {
      taken += chunk.length;
      if (taken > whole.length / 2) branch.destroy();
    });
    const out = await readAll(teeTo(Readable.from(chunks), branch, Number.MAX_SAFE_INTEGER));
    expect(out.equals(whole)).toBe(true);
    expect(branch.destroyed).toBe(true);
  });

  it('keeps the source flowing when the branch drops what it is given (a settled authentication)', async () => {
    const branch = new PassThrough({ highWaterMark: 1024 });
    branch.resume();
    const out = await readAll(teeTo(Readable.from(chunks), branch, Number.MAX_SAFE_INTEGER));
    expect(out.equals(whole)).toBe(true);
  });

  it('stops feeding the branch past the limit, with an error, and passes the rest through', async () => {
    const branch = new PassThrough();
    const received: Buffer[] = [];
    branch.on('data', (chunk: Buffer) => received.push(chunk));
    const failed = once(branch, 'error');
    const out = await readAll(teeTo(Readable.from(chunks), branch, 10 * 4096));
    const [error] = await failed;
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe(`message exceeds ${10 * 4096} bytes; it is not authenticated`);
    expect(Buffer.concat(received).length).toBe(10 * 4096);
    expect(out.equals(whole)).toBe(true);
  });

  it('fails the output and the branch when the source fails', async () => {
    const source = new PassThrough();
    const branch = new PassThrough();
    branch.resume();
    const branchFailed = once(branch, 'error');
    const out = teeTo(source, branch, Number.MAX_SAFE_INTEGER);
    source.write(chunks[0]);
    source.destroy(new Error('connection reset'));
    await expect(readAll(out)).rejects.toThrow('connection reset');
    const [error] = await branchFailed;
    expect((error as Error).message).toBe('connection reset');
  });

  it('fails the output, rather than hanging, when the source closes before its end', async () => {
    const source = new PassThrough();
    const branch = new PassThrough();
    branch.resume();
    branch.on('error', () => undefined);
    const out = teeTo(source, branch, Number.MAX_SAFE_INTEGER);
    source.write(chunks[0]);
    source.destroy();
    await expect(readAll(out)).rejects.toThrow(/premature close/i);
    expect(branch.destroyed).toBe(true);
  });
});
