import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMockApi, type MockApi } from '@ingest-gateway/mock-parsing-api';
import { Queue } from 'bullmq';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../harness/cli-process.ts';
import { startDaemon, writeDaemonConfig } from '../../harness/daemon-process.ts';
import { LogSink } from '../../harness/gateway-harness.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { startCluster, type TestCluster } from '../../harness/redis-cluster.ts';
import { deliver, queuedId, type Reply } from '../../harness/smtp-session.ts';
import { openFailedUploads } from '../../src/cli/failed/open-failed-uploads.ts';
import { parseConfig } from '../../src/config/load-config.ts';
import type { GatewayConfig } from '../../src/config/schema.ts';
import { type Gateway, startGateway } from '../../src/gateway.ts';
import { createLogger } from '../../src/logger.ts';
import { type UploadJobData, uploadJobId, uploadQueueName } from '../../src/queue/upload-queue.ts';
import { createKeySpace } from '../../src/record/keys.ts';
import { createMessageLedger } from '../../src/record/message-ledger.ts';
import { assessNodes, readRedisFacts } from '../../src/redis/durability.ts';

const apiKey = 'cluster-key';
const prefix = 'clu';
const retention = 7200;
const keys = createKeySpace(prefix);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The gateway on a Redis Cluster (redis.cluster): six real redis-server nodes, three masters
 * with a replica each. A message's keys, the queue and the delivery index hash to different
 * slots, so this runs every multi-key command of the SMTP and upload paths against masters
 * that refuse a cross-slot one; and a master is SIGKILLed mid-run to see its replica take over
 * without losing or repeating an upload.
 */
describe('Redis Cluster', () => {
  let cluster: TestCluster;
  let mock: MockApi;
  let gateway: Gateway;
  let config: GatewayConfig;
  let reader: Cluster;
  let queue: Queue<UploadJobData>;
  const logs = new LogSink();
  const logger = createLogger({ level: 'info', destination: logs });
  const dir = mkdtemp(join(tmpdir(), 'cluster-test-'));

  beforeAll(async () => {
    cluster = await startCluster({ nodeTimeout: 2000 });
    mock = createMockApi({ apiKey, logger: createLogger({ level: 'silent', destination: new LogSink() }) });
    const { url } = await mock.start({ host: '127.0.0.1', port: 0 });
    config = parseConfig({
      source: 'test',
      env: {},
      text: [
        // Rates counted for loopback clients too, so their MULTI runs on the cluster.
        'smtp: {host: 127.0.0.1, port: 0, rateLimit: {exempt: []}}',
        `redis: {prefix: ${prefix}, cluster: [${cluster.seeds.map((seed) => `"${seed}"`).join(', ')}]}`,
        `retention: {messages: ${retention}}`,
        // The default api.timeout: the mock never hangs here, and a 2 s one, reached on busy
        // cores, would spend one of the two attempts of an upload that was on its way.
        `api: {baseUrl: "${url}", apiKey: ${apiKey}}`,
        // Short backoff and stall detection keep the failover run to seconds.
        'upload: {concurrency: 4, attempts: 2, retryBaseDelay: 50, retryMaxDelay: 500, stalledAfter: 2000}',
        'http: {host: 127.0.0.1, port: 0}',
        'workspaces:',
        '  - identifier: ws',
        '    ingestEmail: documents@ingest.test',
        '',
      ].join('\n'),
    });
    gateway = await startGateway({
      config,
      role: 'all',
      logger,
      redisUrl: config.redis.url,
      apiBaseUrl: url,
      apiKey,
      random: () => 0,
    });
    reader = new Cluster(
      cluster.seeds.map((seed) => ({ host: '127.0.0.1', port: Number(seed.split(':')[1]) })),
    );
    reader.on('error', () => undefined);
    queue = new Queue<UploadJobData>(uploadQueueName, { connection: reader, prefix: keys.queuePrefix });
    queue.on('error', () => undefined);
  }, 60_000);

  afterAll(async () => {
    await queue?.close();
    reader?.disconnect();
    await gateway?.close();
    await mock?.close();
    await cluster?.close();
    await rm(await dir, { recursive: true, force: true });
  });

  const ledger = () => createMessageLedger(reader, keys, retention);

  /** Resolves with the final state of an upload job (completed or failed). */
  async function settled(messageId: string, entry: number): Promise<string> {
    for (;;) {
      const state = await queue.getJobState(uploadJobId(messageId, entry));
      if (state === 'completed' || state === 'failed') return state;
      await pause(50);
    }
  }

  async function send(files: string[]): Promise<Reply | null> {
    const message = await composeMessage({
      attachments: files.map((name) => ({ filename: name, content: uniquePdf(name) })),
    });
    return (await deliver(gateway.smtpPort ?? 0, { to: ['documents@ingest.test'], message })).data;
  }

  const uploadsOf = (fileName: string) => mock.uploads.filter((upload) => upload.file?.fileName === fileName);

  it('reads the durability of every node, masters and replicas, and names a node that falls short', async () => {
    expect(gateway.durability).toMatchObject({
      aof: 'everysec',
      maxmemoryPolicy: 'noeviction',
      warnings: [],
    });
    const facts = await readRedisFacts(reader);
    expect(facts.map((node) => node.node).sort()).toEqual([...cluster.seeds].sort());
    const [, weak] = cluster.seeds;
    const port = Number(weak?.split(':')[1]);
    const node = reader.nodes('all').find((candidate) => candidate.options.port === port);
    await node?.config('SET', 'appendonly', 'no');
    try {
      const { durability } = assessNodes(await readRedisFacts(reader), {
        allowEviction: false,
        waitAof: false,
      });
      expect(durability.aof).toBe('off');
      expect(durability.warnings).toEqual([
        expect.stringMatching(new RegExp(`^AOF is off: .* \\(on ${weak}\\)$`)),
      ]);
    } finally {
      await node?.config('SET', 'appendonly', 'yes');
    }
  });

  it('spreads a message, its delivery and the queue over different masters', async () => {
    const message = keys.message('m1');
    const slots = new Set(
      await Promise.all(
        [
          message.raw,
          message.record,
          message.blob('a'),
          message.span('a'),
          message.blobRefs('a'),
          message.part(3),
        ].map((key) => reader.cluster('KEYSLOT', key)),
      ),
    );
    // One slot for every key of one message (one MULTI commits them)…
    expect(slots.size).toBe(1);
    // …and the message, the queue and the delivery index each elsewhere, here on different masters.
    const masters = new Set([
      await cluster.masterOf(message.record),
      await cluster.masterOf(`${keys.queuePrefix}:${uploadQueueName}:wait`),
      await cluster.masterOf(keys.delivery('d2')),
    ]);
    expect(masters.size).toBe(3);
  });

  it('takes mail over SMTP and uploads every attachment', async () => {
    const reply = await send(['first-a.pdf', 'first-b.pdf']);
    expect(reply?.text).toMatch(/^250 2\.0\.0 queued as /);
    const id = queuedId(reply);
    expect(await Promise.all([settled(id, 0), settled(id, 1)])).toEqual(['completed', 'completed']);
    const record = await ledger().read(id);
    expect(record?.status).toBe('enqueued');
    expect(record?.attachments.map((entry) => [entry.fileName, entry.state])).toEqual([
      ['first-a.pdf', 'uploaded'],
      ['first-b.pdf', 'uploaded'],
    ]);
    expect(uploadsOf('first-a.pdf')).toHaveLength(1);
    expect(uploadsOf('first-b.pdf')).toHaveLength(1);
    // The rate counters' MULTIs ran on the cluster too (a failed one lets the client through and says so).
    expect(logs.lines.filter((line) => line.includes('rate limits not counted'))).toEqual([]);
    const window = Math.floor(Date.now() / 60_000);
    const counter = (index: number) => `${prefix}:rate:{msg:127.0.0.1}:${index}`;
    expect(await reader.exists(counter(window), counter(window - 1))).toBeGreaterThan(0);
  });

  it('answers a repeated delivery with the first id and uploads once', async () => {
    const message = await composeMessage({
      attachments: [{ filename: 'twice.pdf', content: uniquePdf('twice') }],
    });
    const first = queuedId(
      (await deliver(gateway.smtpPort ?? 0, { to: ['documents@ingest.test'], message })).data,
    );
    expect(await settled(first, 0)).toBe('completed');
    const again = queuedId(
      (await deliver(gateway.smtpPort ?? 0, { to: ['documents@ingest.test'], message })).data,
    );
    expect(again).toBe(first);
    expect(logs.lines.some((line) => line.includes('repeated delivery of an accepted message'))).toBe(true);
    expect(uploadsOf('twice.pdf')).toHaveLength(1);
  });

  it('keeps every key of a message for retention.messages, and no longer', async () => {
    const id = queuedId(await send(['kept.pdf']));
    expect(await settled(id, 0)).toBe('completed');
    const owner = await cluster.masterOf(keys.message(id).record);
    const node = reader.nodes('master').find((candidate) => candidate.options.port === owner);
    const written = (await node?.keys(`${prefix}:{${id}}:*`)) ?? [];
    // The raw copy and the record; the blob went with its upload.
    expect(written.sort()).toEqual([keys.message(id).raw, keys.message(id).record].sort());
    const [entry] = (await ledger().read(id))?.attachments ?? [];
    for (const key of [...written, keys.document(entry?.documentIdentifier ?? '')]) {
      const ttl = await reader.ttl(key);
      expect(ttl, key).toBeGreaterThan(retention - 60);
      expect(ttl, key).toBeLessThanOrEqual(retention);
    }
  });

  it('lists a failed upload and retries it, through the API and the command line', async () => {
    mock.enqueueFault({
      status: 400,
      body: { type: 'validation_error', errors: [{ attr: 'file', code: 'invalid', detail: 'refused once' }] },
    });
    const id = queuedId(await send(['refused.pdf']));
    expect(await settled(id, 0)).toBe('failed');

    const configPath = join(await dir, 'gateway.yaml');
    await writeFile(
      configPath,
      `redis: {prefix: ${prefix}, cluster: ["${cluster.seeds[0]}"]}\napi: {mock: true}\n` +
        'workspaces:\n  - identifier: ws\n    ingestEmail: documents@ingest.test\n',
    );
    const listed = await runCli(['failed', 'list', '--json', '--config', configPath]);
    expect(listed.code).toBe(0);
    const failed = JSON.parse(listed.stdout) as Array<{ jobId: string; reason: string; retryable: boolean }>;
    expect(failed.find((upload) => upload.jobId === `${id}-0`)).toMatchObject({ retryable: true });

    const admin = openFailedUploads(config, config.redis.url, logger);
    try {
      expect(await admin.failed.retry([`${id}-0`])).toEqual({ retried: [`${id}-0`], refused: [] });
    } finally {
      await admin.close();
    }
    expect(await settled(id, 0)).toBe('completed');
    expect((await ledger().readEntry(id, 0))?.state).toBe('uploaded');
    expect(uploadsOf('refused.pdf')).toHaveLength(1);
  });

  it('is what `ingest-gateway start` connects to, its raw copy served by the HTTP API', async () => {
    const configPath = join(await dir, 'daemon.yaml');
    await writeDaemonConfig(configPath, {
      redis: { prefix: 'daemon', cluster: [cluster.seeds[2] ?? ''] },
      api: { mock: true },
      workspaces: [{ identifier: 'ws', ingestEmail: 'documents@ingest.test' }],
    });
    const daemon = await startDaemon(configPath);
    try {
      const message = await composeMessage({
        attachments: [{ filename: 'daemon.pdf', content: uniquePdf('daemon') }],
      });
      const id = queuedId((await deliver(daemon.smtpPort, { to: ['documents@ingest.test'], message })).data);
      const stateOf = async () => {
        const record = (await (await fetch(`${daemon.httpUrl}/v1/messages/${id}`)).json()) as {
          attachments: Array<{ state: string }>;
        };
        return record.attachments[0]?.state;
      };
      while ((await stateOf()) !== 'uploaded') await pause(100);
      const raw = await fetch(`${daemon.httpUrl}/v1/messages/${id}/raw`);
      expect(raw.status).toBe(200);
      expect(Buffer.from(await raw.arrayBuffer()).equals(message)).toBe(true);
      const readiness = (await (await fetch(`${daemon.httpUrl}/readyz`)).json()) as { redis: string };
      expect(readiness.redis).toBe('ok');
    } finally {
      daemon.signal('SIGTERM');
      expect(await daemon.exited).toBe(0);
    }
  }, 60_000);

  it('loses nothing and uploads nothing twice when a master dies and its replica takes over', async () => {
    // The master of the queue: the jobs, their locks and every worker's blocking read are there.
    const victim = await cluster.masterOf(`${keys.queuePrefix}:${uploadQueueName}:wait`);
    const total = 30;
    const plan = Array.from({ length: total }, (_, i) =>
      Array.from({ length: 1 + (i % 2) }, (_, k) => `fo${i}-${k}.pdf`),
    );
    const accepted = new Map<number, string>();
    const replies = new Map<number, number>();
    let failover: Promise<{ promoted: number }> | undefined;
    let next = 0;
    const sender = async () => {
      for (let i = next++; i < total; i = next++) {
        const message = await composeMessage({
          attachments: (plan[i] ?? []).map((name) => ({ filename: name, content: uniquePdf(name) })),
        });
        // As a sending server does: retry whatever is not a 250 (451 during the failover).
        for (let attempt = 0; !accepted.has(i); attempt++) {
          if (attempt > 300) throw new Error(`message ${i} was never accepted`);
          const reply = (
            await deliver(gateway.smtpPort ?? 0, { to: ['documents@ingest.test'], message }).catch(() => ({
              data: null,
            }))
          ).data;
          const code = reply?.code ?? 0;
          replies.set(code, (replies.get(code) ?? 0) + 1);
          if (code === 250) accepted.set(i, queuedId(reply));
          else if (code >= 500) throw new Error(`message ${i} refused for good: ${reply?.text}`);
          else await pause(100);
        }
        // A third of the way in, while the others keep sending, the queue's master crashes.
        if (accepted.size >= total / 3) failover ??= cluster.killMaster(victim);
      }
    };
    await Promise.all(Array.from({ length: 4 }, sender));
    const { promoted } = await (failover ?? Promise.reject(new Error('the master was never killed')));
    expect(await cluster.masterOf(`${keys.queuePrefix}:${uploadQueueName}:wait`)).toBe(promoted);

    // Every accepted message's attachments arrive, within a coarse bound that says what is missing.
    const expected = plan.flat();
    const missing = () => {
      const arrived = new Set(mock.uploads.map((upload) => upload.file?.fileName));
      return expected.filter((name) => !arrived.has(name));
    };
    for (const deadline = Date.now() + 45_000; missing().length > 0 && Date.now() < deadline; )
      await pause(100);
    expect(missing(), `replies by code: ${[...replies].join(' ')}`).toEqual([]);
    // Nothing in flight that could still upload a second copy; then each file arrived once.
    for (const [i, id] of accepted) {
      for (const entry of (plan[i] ?? []).keys()) expect(await settled(id, entry)).toBe('completed');
    }
    const counts = new Map<string, number>();
    for (const name of mock.uploads
      .map((upload) => upload.file?.fileName ?? '')
      .filter((name) => name.startsWith('fo')))
      counts.set(name, (counts.get(name) ?? 0) + 1);
    expect([...counts].filter(([, count]) => count !== 1)).toEqual([]);
    expect(counts.size).toBe(expected.length);
    expect(accepted.size).toBe(total);
  }, 90_000);
});
