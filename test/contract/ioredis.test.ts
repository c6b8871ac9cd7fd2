import { Cluster, Command, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { declaredVersion, EXACT_VERSION, installedManifest } from '../../harness/pinned-version.ts';
import { startRedis, type TestRedis } from '../../harness/redis-server.ts';

/**
 * What the append writer (src/store/) takes from ioredis's Command (docs/overrides.md,
 * "ioredis"): a Command subclass whose toWritable() hands ioredis the bytes it framed itself,
 * sent with sendCommand() and answered through `promise`, its arguments still the key and the
 * payloads so that a Cluster routes it by the key's slot. An upgrade that changes any of that
 * fails here; test/integration/append-writer.test.ts holds the writer itself.
 */

/** A SET whose bytes on the wire say something else than its arguments: which ones reach Redis? */
class FramedSet extends Command {
  private readonly frame: Buffer;

  constructor(key: string, argumentValue: string, wireValue: string) {
    super('set', [key, argumentValue]);
    const bulk = (text: string) => `$${Buffer.byteLength(text)}\r\n${text}\r\n`;
    this.frame = Buffer.from(`*3\r\n${bulk('SET')}${bulk(key)}${bulk(wireValue)}`);
  }

  override toWritable(): Buffer {
    return this.frame;
  }
}

describe('ioredis, as the append writer frames its commands', () => {
  let server: TestRedis;
  const clients: Redis[] = [];

  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    for (const client of clients) client.disconnect();
    await server?.close();
  });

  function connect(options: { enableAutoPipelining?: boolean } = {}): Redis {
    const client = new Redis(server.url, { maxRetriesPerRequest: 1, ...options });
    clients.push(client);
    return client;
  }

  it('is installed at the exact version package.json pins', () => {
    expect(declaredVersion('ioredis')).toMatch(EXACT_VERSION);
    expect(installedManifest('ioredis').version).toBe(declaredVersion('ioredis'));
  });

  it.each([
    { connection: 'a plain connection', options: {} },
    {
      connection: 'a connection that gathers commands (the intake’s)',
      options: { enableAutoPipelining: true },
    },
  ])('writes the bytes toWritable() returns, as they are, on $connection', async ({ options }) => {
    const redis = connect(options);
    const key = `contract:ioredis:${Object.keys(options).length}`;
    const command = new FramedSet(key, 'from the arguments', 'from the frame');
    redis.sendCommand(command);
    expect(String(await command.promise)).toBe('OK');
    expect(await redis.get(key)).toBe('from the frame');
  });

  it('routes a Command by the key among its arguments, as a Cluster does', () => {
    const append = new Command('append', ['{message}:raw', Buffer.from('bytes')]);
    expect(append.getKeys()).toEqual(['{message}:raw']);
    const hset = new Command('hset', ['{message}:raw', '0', Buffer.from('a'), '1', Buffer.from('b')]);
    expect(hset.getKeys()).toEqual(['{message}:raw']);
    expect(append.getSlot()).toBe(hset.getSlot());
    expect(typeof Cluster.prototype.sendCommand).toBe('function');
  });

  it('settles a command’s promise with Redis’s answer, which the writer’s backpressure waits on', async () => {
    const redis = connect();
    const command = new Command('append', ['contract:ioredis:append', Buffer.from('abc')]);
    redis.sendCommand(command);
    await expect(command.promise).resolves.toBe(3);
    const refused = new Command('append', []);
    redis.sendCommand(refused);
    await expect(refused.promise).rejects.toThrow(/wrong number of arguments/);
  });
});
