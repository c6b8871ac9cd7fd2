import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type TestRedis } from '../../harness/redis-server.ts';
import { createAppendWriter } from '../../src/store/append-writer.ts';

/** Resolves with 'pending' when `promise` has not settled once the event loop has turned. */
async function state(promise: Promise<unknown>): Promise<'pending' | 'settled'> {
  const pending = Symbol('pending');
  const winner = await Promise.race([
    promise.then(
      () => 'settled' as const,
      () => 'settled' as const,
    ),
    new Promise<symbol>((resolve) => setTimeout(() => resolve(pending), 50)),
  ]);
  return winner === pending ? 'pending' : 'settled';
}

describe('append writer', () => {
  let server: TestRedis;
  let redis: Redis;
  let n = 0;
  const key = () => `append-writer-test:${++n}`;

  beforeAll(async () => {
    server = await startRedis();
    redis = new Redis(server.url, { maxRetriesPerRequest: 1 });
  });
  afterAll(async () => {
    redis?.disconnect();
    await server?.close();
  });

  it.each([
    { name: 'chunks smaller than an APPEND', chunkBytes: 4096, sizes: [1, 7, 100, 3000, 5000, 1, 4096, 12] },
    { name: 'a chunk larger than an APPEND', chunkBytes: 1000, sizes: [10, 5000, 3, 999, 1000, 1001] },
    { name: 'one byte at a time', chunkBytes: 3, sizes: Array.from({ length: 20 }, () => 1) },
    {
      name: 'the default APPEND size',
      chunkBytes: undefined,
      sizes: [65_536, 65_536, 65_536, 65_536, 65_536, 9],
    },
  ])('stores every byte in order: $name', async ({ chunkBytes, sizes }) => {
    const chunks = sizes.map((size) => randomBytes(size));
    const writer = createAppendWriter(redis, key(), chunkBytes === undefined ? {} : { chunkBytes });
    for (const chunk of chunks) await writer.write(chunk);
    await writer.end();
    const expected = Buffer.concat(chunks);
    expect(writer.bytes).toBe(expected.length);
    expect((await redis.getBuffer(writer.key))?.equals(expected)).toBe(true);
    expect(await redis.ttl(writer.key)).toBeGreaterThan(0);
  });

  it.each([
    {
      name: 'fields of 5 digits, the last of 4',
      chunkBytes: 10_000,
      fieldsPerFrame: 2,
      total: 3 * 10_000 + 9_999,
    },
    {
      name: 'the last field as long as the others',
      chunkBytes: 10_000,
      fieldsPerFrame: 2,
      total: 4 * 10_000,
    },
    {
      name: 'frames ending in a short field',
      chunkBytes: 10_000,
      fieldsPerFrame: 3,
      total: 3 * 10_000 + 10_001,
    },
    {
      name: 'a short last field after two full ones',
      chunkBytes: 10_000,
      fieldsPerFrame: 3,
      total: 2 * 10_000 + 5,
    },
    { name: 'a last field of one byte', chunkBytes: 10_000, fieldsPerFrame: 4, total: 4 * 10_000 + 1 },
    { name: 'names of one to three digits', chunkBytes: 100, fieldsPerFrame: 3, total: 150 * 100 + 7 },
    { name: 'fewer bytes than one field', chunkBytes: 1000, fieldsPerFrame: 2, total: 5 },
    { name: 'one field per HSET', chunkBytes: 1000, fieldsPerFrame: 1, total: 3_500 },
  ])(
    'chunks: several fields per HSET, each field as one per HSET would be: $name',
    async ({ chunkBytes, fieldsPerFrame, total }) => {
      const bytes = randomBytes(total);
      const name = key();
      let hsets = 0;
      const counting = new Proxy(redis, {
        get(target, property, receiver) {
          if (property !== 'sendCommand') return Reflect.get(target, property, receiver);
          return (command: { name: string }) => {
            if (command.name === 'hset') hsets += 1;
            return target.sendCommand(command as Parameters<Redis['sendCommand']>[0]);
          };
        },
      });
      const writer = createAppendWriter(counting, name, { layout: 'chunks', chunkBytes, fieldsPerFrame });
      // Writes of sizes that cross field and frame boundaries anywhere.
      for (let at = 0, size = 1; at < total; at += size, size = (size * 7 + 13) % (3 * chunkBytes) || 1)
        await writer.write(bytes.subarray(at, at + size));
      await writer.end();
      const fields = Math.ceil(total / chunkBytes);
      const stored = await redis.hgetallBuffer(name);
      expect(Object.keys(stored).sort()).toEqual(
        Array.from({ length: fields }, (_, at) => String(at)).sort(),
      );
      for (let at = 0; at < fields; at++)
        expect(
          stored[String(at)]?.equals(bytes.subarray(at * chunkBytes, (at + 1) * chunkBytes)),
          `field ${at}`,
        ).toBe(true);
      expect(hsets).toBe(Math.ceil(fields / fieldsPerFrame));
      expect(await redis.ttl(name)).toBeGreaterThan(0);
    },
  );

  it('writers sharing a connection, their frames reused, each store only their own bytes', async () => {
    const writers = Array.from({ length: 4 }, () => createAppendWriter(redis, key()));
    const sent = writers.map(() => [] as Buffer[]);
    await Promise.all(
      writers.map(async (writer, at) => {
        for (let i = 0; i < 40; i++) {
          const chunk = randomBytes(65_536 + at * 7);
          sent[at]?.push(chunk);
          await writer.write(chunk);
        }
        await writer.end();
      }),
    );
    for (const [at, writer] of writers.entries()) {
      expect((await redis.getBuffer(writer.key))?.equals(Buffer.concat(sent[at] ?? []))).toBe(true);
    }
  });

  it('does not keep a chunk it was given: changing it after write() changes nothing stored', async () => {
    const writer = createAppendWriter(redis, key(), { chunkBytes: 1024 });
    const chunk = Buffer.from('first\r\n');
    await writer.write(chunk);
    chunk.fill(0x2e);
    await writer.write(Buffer.from('second'));
    await writer.end();
    expect(await redis.get(writer.key)).toBe('first\r\nsecond');
  });

  it('keys of any bytes are named as they are (UTF-8)', async () => {
    const writer = createAppendWriter(redis, `${key()}:pièce-jointe`, { chunkBytes: 2 });
    await writer.write(Buffer.from('abcdef'));
    await writer.end();
    expect(await redis.get(writer.key)).toBe('abcdef');
  });

  it('rejects once an APPEND failed, and discard() removes the key', async () => {
    const name = key();
    await redis.hset(name, 'field', 'value');
    const writer = createAppendWriter(redis, name, { chunkBytes: 4 });
    const written = (async () => {
      for (let i = 0; i < 10; i++) await writer.write(Buffer.from('abcd'));
      await writer.end();
    })();
    await expect(written).rejects.toThrow(/WRONGTYPE/);
    await writer.discard();
    expect(await redis.exists(name)).toBe(0);
  });

  it('waits while its own APPENDs and the connection are at their bounds, and goes on once Redis answers', async () => {
    const a = createAppendWriter(redis, key(), { chunkBytes: 1000, maxInFlight: 2, connectionBytes: 500 });
    const b = createAppendWriter(redis, key(), { chunkBytes: 1000, maxInFlight: 2, connectionBytes: 500 });
    server.freeze();
    try {
      // A's first APPEND puts the connection over its budget: A waits though it has only one in flight.
      const first = a.write(randomBytes(1000));
      expect(await state(first)).toBe('pending');
      // B has nothing in flight, so it sends; then it waits for the connection too.
      const second = b.write(randomBytes(1000));
      expect(await state(second)).toBe('pending');
      server.thaw();
      await Promise.all([first, second]);
    } finally {
      server.thaw();
    }
    await Promise.all([a.end(), b.end()]);
    expect(await redis.strlen(a.key)).toBe(1000);
    expect(await redis.strlen(b.key)).toBe(1000);
  });

  it('holds at most maxInFlight APPENDs of its own while Redis does not answer', async () => {
    const writer = createAppendWriter(redis, key(), { chunkBytes: 100, maxInFlight: 2 });
    server.freeze();
    try {
      await writer.write(randomBytes(100));
      const second = writer.write(randomBytes(100));
      expect(await state(second)).toBe('pending');
      server.thaw();
      await second;
    } finally {
      server.thaw();
    }
    await writer.end();
    expect(await redis.strlen(writer.key)).toBe(200);
  });
});
