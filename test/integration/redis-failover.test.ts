import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMockApi, type MockApi } from '@ingest-gateway/mock-parsing-api';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogSink } from '../../harness/gateway-harness.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { deliver, type Reply } from '../../harness/smtp-session.ts';
import { testConfig } from '../../harness/test-config.ts';
import { type Gateway, startGateway } from '../../src/gateway.ts';
import { createLogger } from '../../src/logger.ts';
import { freeLoopbackPort, spawnRedisServer, stopRedisServer } from '../../src/redis/local-redis-server.ts';

const apiKey = 'failover-key';

/**
 * Redis fails over: a Sentinel promotes the replica when the master dies, and the gateway,
 * configured with the Sentinel rather than a server, follows it without a restart: it takes
 * mail again (after 451s a sending server retries) and its workers upload it.
 */
describe('Redis failover through Sentinel', () => {
  const dir = mkdtemp(join(tmpdir(), 'failover-'));
  const processes: ChildProcess[] = [];
  let masterPort: number;
  let replicaPort: number;
  let sentinelPort: number;
  let master: ChildProcess;
  let mock: MockApi;
  let gateway: Gateway;

  beforeAll(async () => {
    const base = await dir;
    [masterPort, replicaPort, sentinelPort] = [
      await freeLoopbackPort(),
      await freeLoopbackPort(),
      await freeLoopbackPort(),
    ];
    const server = (port: number, name: string, extra: string[] = []) => [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      base,
      '--dbfilename',
      `${name}.rdb`,
      '--appendonly',
      'yes',
      '--appendfilename',
      `${name}.aof`,
      '--appenddirname',
      `${name}-aof`,
      '--maxmemory-policy',
      'noeviction',
      ...extra,
    ];
    master = await spawnRedisServer(server(masterPort, 'master'));
    processes.push(master);
    processes.push(
      await spawnRedisServer(
        server(replicaPort, 'replica', ['--replicaof', '127.0.0.1', String(masterPort)]),
      ),
    );
    const sentinelConf = join(base, 'sentinel.conf');
    await writeFile(
      sentinelConf,
      [
        `port ${sentinelPort}`,
        'bind 127.0.0.1',
        `sentinel monitor mymaster 127.0.0.1 ${masterPort} 1`,
        'sentinel down-after-milliseconds mymaster 1000',
        'sentinel failover-timeout mymaster 5000',
        '',
      ].join('\n'),
    );
    processes.push(await spawnRedisServer([sentinelConf, '--sentinel'], '+monitor master'));

    const logger = createLogger({ level: 'warn', destination: new LogSink() });
    mock = createMockApi({ apiKey, logger });
    const { url } = await mock.start({ host: '127.0.0.1', port: 0 });
    const config = testConfig({
      redis: { url: `redis://127.0.0.1:${masterPort}`, sentinels: [`127.0.0.1:${sentinelPort}`] },
      api: { baseUrl: url, apiKey },
      upload: { retryBaseDelay: 50 },
      workspaces: [{ identifier: 'ws', ingestEmail: 'documents@ingest.test' }],
    });
    gateway = await startGateway({
      config,
      role: 'all',
      logger,
      redisUrl: config.redis.url,
      apiBaseUrl: url,
      apiKey,
    });
  });

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
    for (const child of processes.reverse()) await stopRedisServer(child, 'SIGKILL');
    await rm(await dir, { recursive: true, force: true });
  });

  /** As a sending server does: retry a temporary failure until the mail is taken (bounded). */
  async function deliverUntilAccepted(label: string): Promise<Reply | null> {
    const message = await composeMessage({
      attachments: [{ filename: `${label}.pdf`, content: uniquePdf(label) }],
    });
    let reply: Reply | null = null;
    for (let attempt = 0; attempt < 150 && reply?.code !== 250; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 100));
      reply = (await deliver(gateway.smtpPort ?? 0, { to: ['documents@ingest.test'], message })).data;
    }
    return reply;
  }

  it('follows the promoted replica and delivers what it accepts before and after', async () => {
    expect((await deliverUntilAccepted('before'))?.code).toBe(250);
    await mock.waitForUploads(1);

    await stopRedisServer(master, 'SIGKILL');
    // The Sentinel promotes the replica once the master has been down for a second.
    const sentinel = new Redis({ port: sentinelPort, host: '127.0.0.1', lazyConnect: true });
    await sentinel.connect();
    try {
      for (let check = 0; ; check++) {
        const [, port] = (await sentinel.call('SENTINEL', 'get-master-addr-by-name', 'mymaster')) as [
          string,
          string,
        ];
        if (Number(port) === replicaPort) break;
        if (check > 300) throw new Error('the Sentinel did not promote the replica');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      sentinel.disconnect();
    }

    expect((await deliverUntilAccepted('after'))?.text).toMatch(/^250 2\.0\.0 queued as /);
    const uploads = await mock.waitForUploads(2);
    expect(uploads.map((upload) => upload.file?.fileName).sort()).toEqual(['after.pdf', 'before.pdf']);
  }, 60_000);
});
