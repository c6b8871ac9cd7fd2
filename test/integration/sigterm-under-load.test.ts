import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMockApi, type MockApi } from '@ingest-gateway/mock-parsing-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, writeDaemonConfig } from '../../harness/daemon-process.ts';
import { LogSink } from '../../harness/gateway-harness.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { startRedis, type TestRedis } from '../../harness/redis-server.ts';
import { deliver, type Reply } from '../../harness/smtp-session.ts';
import { createLogger } from '../../src/logger.ts';

const apiKey = 'sigterm-test-key';
const messages = 40;

/**
 * SIGTERM while mail streams in: the daemon stops taking mail (421 or a refused connection,
 * which a sending server retries), answers the transactions it has, exits 0, and every
 * message that got 250 is uploaded once, by this daemon or by the next one.
 */
describe('SIGTERM under load', () => {
  let redis: TestRedis;
  let mock: MockApi;
  let dir: string;
  let configPath: string;

  beforeAll(async () => {
    redis = await startRedis({ config: { appendonly: 'yes' } });
    mock = createMockApi({ apiKey, logger: createLogger({ level: 'silent', destination: new LogSink() }) });
    const { url } = await mock.start({ host: '127.0.0.1', port: 0 });
    dir = await mkdtemp(join(tmpdir(), 'sigterm-'));
    configPath = join(dir, 'gateway.yaml');
    await writeDaemonConfig(configPath, {
      smtp: { closeTimeout: 10000 },
      redis: { url: redis.url },
      api: { baseUrl: url, apiKey },
      workspaces: [{ identifier: 'ws', ingestEmail: 'documents@ingest.test' }],
    });
  });
  afterAll(async () => {
    await mock?.close();
    await redis?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('loses nothing it accepted and exits 0', async () => {
    const bodies = await Promise.all(
      Array.from({ length: messages }, (_, i) =>
        composeMessage({ attachments: [{ filename: `load-${i}.pdf`, content: uniquePdf(`load-${i}`) }] }),
      ),
    );
    const first = await startDaemon(configPath);
    const replies: Array<Reply | null> = new Array(messages).fill(null);
    let answered = 0;
    let signalled = false;
    // Ten senders at a time; SIGTERM once a third of the mail has been answered.
    const send = async (i: number, port: number) => {
      const body = bodies[i];
      if (!body) return;
      const { data } = await deliver(port, { to: ['documents@ingest.test'], message: body });
      replies[i] = data;
      answered++;
      if (!signalled && answered >= messages / 3) {
        signalled = true;
        first.signal('SIGTERM');
      }
    };
    for (let start = 0; start < messages; start += 10) {
      await Promise.all(Array.from({ length: 10 }, (_, k) => send(start + k, first.smtpPort)));
    }
    expect(await first.exited).toBe(0);
    const accepted = replies.filter((reply) => reply?.code === 250).length;
    const turnedAway = replies.filter((reply) => reply?.code !== 250);
    expect(accepted).toBeGreaterThan(0);
    // The batches sent after the signal met a daemon that was stopping.
    expect(turnedAway.length).toBeGreaterThan(0);
    // What was turned away was turned away as temporary: 421, or no connection at all.
    for (const reply of turnedAway) expect([0, 421, undefined]).toContain(reply?.code);

    // A sending server retries what was not accepted, against the restarted daemon.
    const second = await startDaemon(configPath);
    try {
      for (let i = 0; i < messages; i++) {
        if (replies[i]?.code === 250) continue;
        await send(i, second.smtpPort);
        expect(replies[i]?.code).toBe(250);
      }
      const uploads = await mock.waitForUploads(messages);
      const perFile = new Map<string, number>();
      for (const upload of uploads) {
        const name = upload.file?.fileName ?? '';
        perFile.set(name, (perFile.get(name) ?? 0) + 1);
      }
      for (let i = 0; i < messages; i++) expect(perFile.get(`load-${i}.pdf`), `load-${i}.pdf`).toBe(1);
    } finally {
      second.signal('SIGTERM');
      expect(await second.exited).toBe(0);
    }
  }, 120_000);
});
