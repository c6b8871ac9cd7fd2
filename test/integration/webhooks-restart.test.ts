import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonProcess, startDaemon, writeDaemonConfig } from '../../harness/daemon-process.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { startRedis, type TestRedis } from '../../harness/redis-server.ts';
import { deliver, queuedId } from '../../harness/smtp-session.ts';
import { startWebhookReceiver, type TestWebhookReceiver } from '../../harness/webhook-receiver.ts';

const secret = 'restart-receiver-secret-0123456789';

/**
 * A receiver that is down when the events happen, and a gateway restarted meanwhile: the
 * deliveries wait in Redis and reach the receiver once it listens (README, "Webhooks").
 */
describe('webhook deliveries across a receiver outage and a gateway restart', () => {
  let redis: TestRedis;
  let dir: string;
  let daemon: DaemonProcess | undefined;
  let receiver: TestWebhookReceiver | undefined;

  beforeAll(async () => {
    redis = await startRedis();
    dir = await mkdtemp(join(tmpdir(), 'webhooks-restart-'));
  });
  afterAll(async () => {
    daemon?.signal('SIGKILL');
    await daemon?.exited;
    await receiver?.close();
    await redis?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('delivers the events once the receiver listens again, after a restart in between', async () => {
    // A port nobody listens on until the receiver comes back on it.
    const probe = await startWebhookReceiver(secret);
    const { port, url } = probe;
    await probe.close();
    const configPath = join(dir, 'gateway.yaml');
    await writeDaemonConfig(configPath, {
      redis: { url: redis.url, prefix: 'webhooks-restart' },
      events: { retryBaseDelay: 200, retryMaxDelay: 500, webhooks: [{ url, secret }] },
      workspaces: [{ identifier: 'ws-open', ingestEmail: 'documents@ingest.test' }],
    });
    daemon = await startDaemon(configPath);
    const message = await composeMessage({
      to: 'documents@ingest.test',
      attachments: [{ filename: 'restart.pdf', content: uniquePdf('webhooks-restart') }],
    });
    const id = queuedId((await deliver(daemon.smtpPort, { to: ['documents@ingest.test'], message })).data);
    await daemon.waitFor((line) => line.includes('webhook delivery failed; tried again later'));
    daemon.signal('SIGTERM');
    expect(await daemon.exited).toBe(0);
    const firstLines = daemon.lines;

    receiver = await startWebhookReceiver(secret, port);
    daemon = await startDaemon(configPath);
    const accepted = await receiver.waitFor((e) => e.event === 'message.accepted');
    const uploaded = await receiver.waitFor((e) => e.event === 'document.uploaded');
    expect(accepted.payload).toMatchObject({ messageId: id, workspace: 'ws-open' });
    expect(uploaded.payload).toMatchObject({ messageId: id, attachment: { state: 'uploaded' } });
    expect(receiver.forged).toBe(0);
    for (const line of [...firstLines, ...daemon.lines]) expect(line).not.toContain(secret);
    // Two daemons started and one stopped: a busy machine takes more than the default half minute.
  }, 90_000);
});
