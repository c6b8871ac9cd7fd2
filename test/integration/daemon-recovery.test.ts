import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMockApi, type MockApi } from '@ingest-gateway/mock-parsing-api';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonProcess, startDaemon, writeDaemonConfig } from '../../harness/daemon-process.ts';
import { LogSink } from '../../harness/gateway-harness.ts';
import { entrySettled, entryWhen, until } from '../../harness/http-state.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { startRedis, type TestRedis } from '../../harness/redis-server.ts';
import { deliver, queuedId } from '../../harness/smtp-session.ts';
import type { TestConfigInput } from '../../harness/test-config.ts';
import { createLogger } from '../../src/logger.ts';
import { createKeySpace } from '../../src/record/keys.ts';
import { createMessageLedger } from '../../src/record/message-ledger.ts';

const rightKey = 'recovery-right-key';

/** The daemon as operators run it: a refused key, a reload, and a job that kills its worker. */
describe('recovery of the running daemon', () => {
  let redis: TestRedis;
  let mock: MockApi;
  let mockUrl: string;
  let dir: string;
  let daemon: DaemonProcess | undefined;

  beforeAll(async () => {
    redis = await startRedis({ config: { appendonly: 'yes' } });
    mock = createMockApi({
      apiKey: rightKey,
      logger: createLogger({ level: 'silent', destination: new LogSink() }),
    });
    ({ url: mockUrl } = await mock.start({ host: '127.0.0.1', port: 0 }));
    dir = await mkdtemp(join(tmpdir(), 'recovery-'));
  });
  afterEach(async () => {
    mock.clearFaults();
    // A daemon a failed test left running; signalling one that has exited changes nothing.
    daemon?.signal('SIGKILL');
    await daemon?.exited;
    daemon = undefined;
  });
  afterAll(async () => {
    await mock?.close();
    await redis?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** The prefix is the file's name, so a rewritten file (a reload) keeps its keys. */
  async function writeConfig(
    name: string,
    api: TestConfigInput['api'],
    upload: TestConfigInput['upload'] = {},
  ): Promise<string> {
    const path = join(dir, name);
    await writeDaemonConfig(path, {
      redis: { url: redis.url, prefix: name.replace(/\W/g, '') },
      api,
      upload: { attempts: 5, retryBaseDelay: 50, ...upload },
      workspaces: [{ identifier: 'ws', ingestEmail: 'documents@ingest.test' }],
    });
    return path;
  }

  async function send(port: number, label: string): Promise<string> {
    const message = await composeMessage({
      attachments: [{ filename: `${label}.pdf`, content: uniquePdf(label) }],
    });
    return queuedId((await deliver(port, { to: ['documents@ingest.test'], message })).data);
  }

  const readyz = async (url: string) => {
    const response = await fetch(`${url}/readyz`);
    return { status: response.status, body: (await response.json()) as { worker: string } };
  };

  it('pauses uploads on a refused key, says why in /readyz, and resumes when SIGHUP brings the right key', async () => {
    const keyFile = join(dir, 'api-key');
    await writeFile(keyFile, 'recovery-wrong-key\n');
    const url = mockUrl;
    const configPath = await writeConfig('reload.yaml', { baseUrl: url, apiKeyFile: keyFile });
    const running = await startDaemon(configPath);
    daemon = running;

    const id = await send(running.smtpPort, 'held');
    const paused = await until(
      'the worker to pause on the refused key',
      () => readyz(running.httpUrl),
      ({ body }) => body.worker.includes('refused the API key'),
    );
    expect(paused.status).toBe(503);
    expect(paused.body.worker).toMatch(/refused the API key \(HTTP 401\)/);
    expect(mock.uploads.filter((upload) => upload.file?.fileName === 'held.pdf')).toHaveLength(0);

    // A broken configuration is refused whole; the running one stays.
    await writeFile(configPath, 'smtp: [not, a, mapping]\n');
    running.signal('SIGHUP');
    // The refusal is told to the operator in the log, and nowhere else.
    await running.waitFor((line) => line.includes('configuration not reloaded'));

    await writeConfig('reload.yaml', { baseUrl: url, apiKeyFile: keyFile });
    await writeFile(keyFile, `${rightKey}\n`);
    running.signal('SIGHUP');
    const [upload] = await mock.waitForUploads(1);
    expect(upload?.file?.fileName).toBe('held.pdf');
    expect(upload?.authorization).toBe(`Bearer ${rightKey}`);
    expect((await entrySettled(running.httpUrl, id, 0)).state).toBe('uploaded');
    expect((await readyz(running.httpUrl)).status).toBe(200);

    running.signal('SIGTERM');
    expect(await running.exited).toBe(0);
  }, 60_000);

  it('fails a job that keeps killing its worker, with a reason, instead of looping', async () => {
    mock.enqueueFault({ hang: true, times: 'always' });
    // Stalls only from the kills: a live worker renews its lock every half of stalledAfter, and
    // 5 s leaves a busy daemon seconds to do it; a lock lost to a late renewal would be a stall
    // of its own, and the job would fail before the second kill.
    const configPath = await writeConfig(
      'poison.yaml',
      { baseUrl: mockUrl, apiKey: rightKey, timeout: 60000 },
      { stalledAfter: 5000, maxStalls: 1 },
    );
    daemon = await startDaemon(configPath, 'all', 'debug');
    const id = await send(daemon.smtpPort, 'poison');
    // Twice the worker dies in the middle of the job (upload.maxStalls: 1 allows one stall):
    // each process marks the entry uploading anew before its request, which never returns.
    let before = '';
    for (let kill = 0; kill < 2; kill++) {
      const current = daemon;
      const taken = await entryWhen(
        current.httpUrl,
        id,
        0,
        'taken up by this process',
        ({ state, updatedAt }) => state === 'uploading' && updatedAt !== before,
      );
      before = taken.updatedAt;
      current.signal('SIGKILL');
      await current.exited;
      daemon = await startDaemon(configPath, 'all', 'debug');
    }
    const restarted = daemon;
    expect((await entrySettled(restarted.httpUrl, id, 0)).state).toBe('failed');

    const reader = new Redis(redis.url);
    try {
      const entry = await createMessageLedger(reader, createKeySpace('poisonyaml'), 3600).readEntry(id, 0);
      expect(entry?.state).toBe('failed');
      expect(entry?.reason).toMatch(/stalled more than allowable limit/);
    } finally {
      reader.disconnect();
    }
    restarted.signal('SIGTERM');
    expect(await restarted.exited).toBe(0);
  }, 180_000);

  it('stops within its deadline with an upload in flight, and the next run uploads it once', async () => {
    // The upload hangs (the API's timeout is a minute); stopping must not wait for it.
    mock.enqueueFault({ hang: true });
    const configPath = await writeConfig(
      'inflight.yaml',
      { baseUrl: mockUrl, apiKey: rightKey, timeout: 60000 },
      { stalledAfter: 1000, closeTimeout: 1000 },
    );
    const first = await startDaemon(configPath, 'all', 'debug');
    daemon = first;
    const id = await send(first.smtpPort, 'inflight');
    await entryWhen(first.httpUrl, id, 0, 'uploading', ({ state }) => state === 'uploading');
    const stopping = Date.now();
    first.signal('SIGTERM');
    expect(await first.exited).toBe(0);
    // A coarse bound: upload.closeTimeout (1 s) and the closing steps, far below the minute
    // the hanging request would have held the process.
    expect(Date.now() - stopping).toBeLessThan(20_000);

    const second = await startDaemon(configPath);
    daemon = second;
    expect((await entrySettled(second.httpUrl, id, 0)).state).toBe('uploaded');
    expect(mock.uploads.filter((upload) => upload.file?.fileName === 'inflight.pdf')).toHaveLength(1);
    second.signal('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 90_000);
});
