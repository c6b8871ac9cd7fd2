import type { Socket } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogSink } from '../../harness/gateway-harness.ts';
import { startRedis, type TestRedis } from '../../harness/redis-server.ts';
import { createLogger } from '../../src/logger.ts';
import { closeConnection, createIntakeConnection } from '../../src/redis/connections.ts';
import { createRedisOutageLog } from '../../src/redis/outage-log.ts';
import {
  createRawCopyWriter,
  RAW_CHUNK_BYTES,
  RAW_FIELDS_PER_HSET,
  readRawRange,
} from '../../src/store/raw-copy.ts';

/** Everything written to the connection's socket while `run` runs, one entry per write. */
async function writesDuring(redis: Redis, run: () => Promise<unknown>): Promise<Buffer[]> {
  const socket = redis.stream as Socket;
  const writes: Buffer[] = [];
  const write = socket.write;
  socket.write = function (this: Socket, chunk: string | Uint8Array, ...rest: never[]) {
    writes.push(typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk));
    return write.call(this, chunk, ...rest);
  } as typeof socket.write;
  try {
    await run();
  } finally {
    socket.write = write;
  }
  return writes;
}

/**
 * The intake's connection with gatherCommands (ioredis autopipelining): the small commands the
 * sessions send in one turn of the event loop go out in one write, in the order they were
 * sent, while the raw copy's frames are written at once, each on its own, and a Redis that is
 * away still fails a command at once.
 */
describe('the intake connection, gathering commands', () => {
  let server: TestRedis;
  let redis: Redis;
  const logger = createLogger({ level: 'silent', destination: new LogSink() });

  beforeAll(async () => {
    server = await startRedis();
    const client = createIntakeConnection(server.url, createRedisOutageLog({ logger }), 'intake', {
      gatherCommands: true,
    });
    if (!(client instanceof Redis)) throw new Error('a single Redis was asked for');
    redis = client;
    await new Promise((resolve) => redis.once('ready', resolve));
  });
  afterAll(async () => {
    if (redis) await closeConnection(redis);
    await server?.close();
  });

  it('sends the commands of one turn in one write, run in the order they were sent', async () => {
    const writes = await writesDuring(redis, () =>
      Promise.all([
        redis.set('gather:order', 'a'),
        redis.append('gather:order', 'b'),
        redis.expire('gather:order', 60),
        redis.append('gather:order', 'c'),
      ]),
    );
    expect(writes).toHaveLength(1);
    expect(await redis.get('gather:order')).toBe('abc');
    expect(await redis.ttl('gather:order')).toBeGreaterThan(0);
  });

  it('writes each frame of a raw copy at once and alone, its expiry gathered apart', async () => {
    const bytes = Buffer.alloc(RAW_FIELDS_PER_HSET * RAW_CHUNK_BYTES + 100, 'x');
    const writer = createRawCopyWriter(redis, 'gather:{m}:raw');
    const writes = await writesDuring(redis, async () => {
      await writer.write(bytes);
      await writer.end();
    });
    const frames = writes.filter((write) => write.includes('HSET'));
    const full = Array.from(
      { length: RAW_FIELDS_PER_HSET },
      (_, at) => [String(at), RAW_CHUNK_BYTES] as const,
    );
    expect(frames.map((frame) => frame.length)).toEqual([
      frameBytes('gather:{m}:raw', full),
      frameBytes('gather:{m}:raw', [[String(RAW_FIELDS_PER_HSET), 100]]),
    ]);
    // ioredis names the commands it builds in lower case.
    expect(writes.some((write) => write.includes('expire') && !write.includes('HSET'))).toBe(true);
    expect((await readRawRange(redis, writer.key, 0, bytes.length)).equals(bytes)).toBe(true);
    expect(await redis.ttl(writer.key)).toBeGreaterThan(0);
  });

  it('fails a command at once while Redis is away, and serves again once it is back', async () => {
    await server.stop();
    try {
      await expect(redis.set('gather:away', '1')).rejects.toThrow();
    } finally {
      await server.start();
    }
    if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve));
    expect(await redis.set('gather:back', '1')).toBe('OK');
  });
});

/** Bytes of one HSET of these fields (name, bytes of its value) as RESP. */
function frameBytes(key: string, fields: readonly (readonly [string, number])[]): number {
  const bulk = (length: number) => `$${length}\r\n`.length + length + 2;
  let total = `*${2 + 2 * fields.length}\r\n`.length + bulk(4) + bulk(Buffer.byteLength(key));
  for (const [field, payload] of fields) total += bulk(field.length) + bulk(payload);
  return total;
}
