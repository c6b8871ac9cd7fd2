import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { getJson, readyzAnswers, until } from '../../harness/http-state.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { deliver, queuedId, type Reply } from '../../harness/smtp-session.ts';

interface Readyz {
  ready: boolean;
  redis: string;
  connections: Record<string, string>;
}

/**
 * Readiness is what a load balancer sends mail by: once /readyz answers 200 after Redis was
 * away, the very next message is taken, whichever of the gateway's connections came back last.
 */
describe('readiness after Redis was away', () => {
  let harness: Harness;
  let admin: Redis;

  beforeAll(async () => {
    harness = await startHarness();
    admin = new Redis(harness.redis.url, { maxRetriesPerRequest: null, lazyConnect: true });
    admin.on('error', () => undefined);
  });
  afterAll(async () => {
    admin?.disconnect();
    await harness?.close();
  });

  const readyz = () => getJson<Readyz>(`${harness.httpUrl}/readyz`);
  const send = async (label: string): Promise<Reply | null> => {
    const message = await composeMessage({
      attachments: [{ filename: `${label}.pdf`, content: uniquePdf(label) }],
    });
    return (await deliver(harness.smtpPort, { to: ['documents@ingest.test'], message })).data;
  };

  it('is not ready while mail is refused because the queue connection alone cannot reconnect, naming it', async () => {
    await readyzAnswers(harness.httpUrl, 200);
    await admin.connect();
    // Connections already open keep their login; the queue connection, cut, cannot log in again.
    await admin.config('SET', 'requirepass', 'readiness-test-password');
    try {
      const clients = String(await admin.client('LIST'));
      const queueId = /^id=(\d+) .* name=ingest-gateway:queue /m.exec(clients)?.[1];
      expect(queueId).toBeDefined();
      await admin.client('KILL', 'ID', String(queueId));
      await until(
        'mail to be refused while the queue connection is away',
        () => send('queue-away'),
        (reply) => reply?.code === 451,
      );
      // The intake connection answers all along: readiness must not say ready on its word.
      const refusing = await readyz();
      expect(refusing.status).toBe(503);
      expect(refusing.body).toMatchObject({ redis: 'unreachable', connections: { intake: 'ready' } });
      expect(refusing.body?.connections.queue).not.toBe('ready');
    } finally {
      await admin.config('SET', 'requirepass', '');
    }
    await readyzAnswers(harness.httpUrl, 200);
    expect((await send('queue-back'))?.text).toMatch(/^250 2\.0\.0 queued as /);
  });

  it('names every connection not ready while Redis is down, and takes the first message sent once ready', async () => {
    for (const restart of [1, 2, 3]) {
      await harness.redis.stop();
      const down = await until(
        'every connection to be named not ready',
        readyz,
        ({ status, body }) =>
          status === 503 && Object.values(body?.connections ?? { none: 'ready' }).every((s) => s !== 'ready'),
      );
      expect(down.body).toMatchObject({ ready: false, redis: 'unreachable' });
      expect(Object.keys(down.body?.connections ?? {}).sort()).toEqual(['intake', 'queue', 'worker']);

      await harness.redis.start();
      const up = await readyzAnswers<Readyz>(harness.httpUrl, 200);
      const reply = await send(`restart-${restart}`);
      expect(reply?.text, `after restart ${restart}`).toMatch(/^250 2\.0\.0 queued as /);
      expect(up.body?.connections).toEqual({ intake: 'ready', queue: 'ready', worker: 'ready' });
      expect(await harness.settled(queuedId(reply), 0)).toBe('completed');
    }
  });
});

describe.each([
  { role: 'smtp' as const, needs: ['intake', 'queue'] },
  { role: 'worker' as const, needs: ['intake', 'worker'] },
])('readiness of the $role role', ({ role, needs }) => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startHarness({ role });
  });
  afterAll(async () => harness?.close());

  it('checks the connections its work needs', async () => {
    const { body } = await readyzAnswers<Readyz>(harness.httpUrl, 200);
    expect(Object.keys(body?.connections ?? {}).sort()).toEqual(needs);
  });
});
