import { createMockApi, type MockApi } from '@ingest-gateway/mock-parsing-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogSink } from '../../harness/gateway-harness.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { startCluster, type TestCluster } from '../../harness/redis-cluster.ts';
import { deliver, queuedId } from '../../harness/smtp-session.ts';
import { testConfig } from '../../harness/test-config.ts';
import { type Gateway, startGateway } from '../../src/gateway.ts';
import { createLogger } from '../../src/logger.ts';
import type { MessageRecord } from '../../src/record/message-record.ts';

const apiKey = 'cluster-http-key';

/**
 * The record API on a Redis Cluster: the listing index, the settle announcements (pub/sub
 * across nodes) and DELETE /v1/messages (a SCAN per master, keys of many slots) on three
 * masters that refuse any cross-slot command.
 */
describe('HTTP API on a Redis Cluster', () => {
  let cluster: TestCluster;
  let mock: MockApi;
  let gateway: Gateway;
  const logger = createLogger({ level: 'silent', destination: new LogSink() });

  beforeAll(async () => {
    cluster = await startCluster();
    mock = createMockApi({ apiKey, logger });
    const { url } = await mock.start({ host: '127.0.0.1', port: 0 });
    const config = testConfig({
      redis: { cluster: [...cluster.seeds] },
      api: { baseUrl: url, apiKey },
      http: { allowReset: true },
    });
    gateway = await startGateway({
      config,
      role: 'all',
      logger,
      redisUrl: config.redis.url,
      apiBaseUrl: url,
      apiKey,
    });
  }, 60_000);
  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
    await cluster?.close();
  });

  async function send(label: string): Promise<string> {
    const message = await composeMessage({
      subject: label,
      attachments: [{ filename: `${label}.pdf`, content: uniquePdf(label) }],
    });
    return queuedId((await deliver(gateway.smtpPort ?? 0, { to: ['documents@ingest.test'], message })).data);
  }

  const list = async (query: string) => {
    const response = await fetch(`${gateway.httpUrl}/v1/messages?${query}`);
    return { status: response.status, body: (await response.json()) as { messages: MessageRecord[] } };
  };

  it('long-polls until the upload settles, lists newest first, and erases every master', async () => {
    const polled = list('q=first&wait=30');
    const first = await send('first');
    const { status, body } = await polled;
    expect(status).toBe(200);
    expect(body.messages.map((message) => [message.id, message.attachments[0]?.state])).toEqual([
      [first, 'uploaded'],
    ]);
    const second = await send('second');
    expect((await list('q=second&wait=30')).status).toBe(200);
    expect((await list('')).body.messages.map((message) => message.id)).toEqual([second, first]);

    const erased = await fetch(`${gateway.httpUrl}/v1/messages`, { method: 'DELETE' });
    expect(erased.status).toBe(200);
    expect(((await erased.json()) as { deleted: number }).deleted).toBeGreaterThan(0);
    expect((await list('')).body.messages).toEqual([]);
    expect((await fetch(`${gateway.httpUrl}/v1/messages/${first}`)).status).toBe(404);

    const third = await send('third');
    expect((await list('q=third&wait=30')).body.messages.map((message) => message.id)).toEqual([third]);
  });
});
