import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { uniquePdf } from '../../harness/messages.ts';
import { startRedis, type TestRedis } from '../../harness/redis-server.ts';
import { startTestGateway, type TestGateway } from '../../src/testing/start-test-gateway.ts';

const invoice = (label: string) => [{ filename: `${label}.pdf`, content: uniquePdf(label) }];

/** ingest-gateway/testing, as a user's suite drives it. */
describe('startTestGateway with a private redis-server', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway({
      workspaces: [
        { identifier: 'ws-open', ingestEmail: 'documents@ingest.test' },
        {
          identifier: 'ws-acme',
          ingestEmail: 'acme@ingest.test',
          whitelistIngestAddresses: ['*@acme.example'],
        },
      ],
    });
  });
  beforeEach(async () => gateway.reset());
  afterAll(async () => gateway?.close());

  it('sends to the first workspace by default and waits until the upload is done', async () => {
    const sent = await gateway.sendMail({ subject: 'First', attachments: invoice('first') });
    expect(sent.response).toMatch(/^250 2\.0\.0 queued as [0-9a-z]+/);
    const message = await gateway.waitForMessage({ to: 'documents@ingest.test' });
    expect(message).toMatchObject({ id: sent.id, from: 'sender@example.com', subject: 'First' });
    expect(message.attachments).toEqual([
      expect.objectContaining({ state: 'uploaded', workspace: 'ws-open' }),
    ]);
    expect(gateway.uploads().map((upload) => upload.file?.fileName)).toEqual(['first.pdf']);
    expect(gateway.uploads()[0]?.fields.workspace).toEqual(['ws-open']);
  });

  it('reset() forgets messages and uploads: the next test sees none of them', async () => {
    const { id } = await gateway.sendMail({ subject: 'Before reset', attachments: invoice('before') });
    await gateway.waitForMessage({ q: 'Before reset' });
    await gateway.reset();
    expect(gateway.uploads()).toEqual([]);
    expect((await fetch(`${gateway.httpUrl}/v1/messages/${id}`)).status).toBe(404);
    await expect(gateway.waitForMessage({ q: 'Before reset' }, { timeoutSeconds: 1 })).rejects.toThrow(
      /^waitForMessage\(\{"q":"Before reset"\}\): 408 no matching message settled within 1 s$/,
    );
  });

  it('waits for a failed upload too, and sees faults injected into the mock', async () => {
    gateway.mockApi.enqueueFault({
      status: 400,
      body: { type: 'validation_error', errors: [{ attr: 'file', code: 'invalid', detail: 'refused' }] },
    });
    const { id } = await gateway.sendMail({ subject: 'Refused', attachments: invoice('refused') });
    const message = await gateway.waitForMessage({ state: 'failed' });
    expect(message.id).toBe(id);
    expect(message.attachments[0]?.state).toBe('failed');
  });

  it('rejects a mail the gateway refuses, with the SMTP reply', async () => {
    await expect(gateway.sendMail({ to: 'nobody@ingest.test', attachments: invoice('x') })).rejects.toThrow(
      /550 5\.1\.1/,
    );
    await expect(gateway.sendMail({ to: 'acme@ingest.test', attachments: invoice('y') })).rejects.toThrow(
      /550 5\.7\.1/,
    );
  });

  it('rejects a malformed filter with the problems the API names', async () => {
    await expect(gateway.waitForMessage({}, { timeoutSeconds: 500 })).rejects.toThrow(/400 bad query; wait:/);
  });
});

describe('startTestGateway on a given Redis', () => {
  let redis: TestRedis;
  let reader: Redis;

  beforeAll(async () => {
    redis = await startRedis();
    reader = new Redis(redis.url);
  });
  afterAll(async () => {
    reader?.disconnect();
    await redis?.close();
  });

  it('keeps its keys under a prefix of its own, leaves other keys alone, and closes idempotently', async () => {
    await reader.set('ingest:someone-else', 'kept');
    const gateway = await startTestGateway({ redisUrl: redis.url });
    try {
      const { id } = await gateway.sendMail({ attachments: invoice('shared') });
      expect((await gateway.waitForMessage({ q: 'shared.pdf' })).id).toBe(id);
      const [recordKey] = await reader.keys(`*{${id}}:record`);
      expect(recordKey).toMatch(/^test[0-9a-f]{12}:\{/);
      await gateway.reset();
      expect(await reader.keys(`*{${id}}:*`)).toEqual([]);
      expect(await reader.get('ingest:someone-else')).toBe('kept');
    } finally {
      await gateway.close();
      await gateway.close();
    }
    expect(await reader.ping()).toBe('PONG');
  });
});
