import { X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { createMockApi, type MockApi } from '@ingest-gateway/mock-parsing-api';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { nextLogEntry } from '../../harness/daemon-log.ts';
import { type DaemonProcess, startDaemon, writeDaemonConfig } from '../../harness/daemon-process.ts';
import { LogSink } from '../../harness/gateway-harness.ts';
import { entrySettled } from '../../harness/http-state.ts';
import { kubernetesVolume } from '../../harness/kubernetes-volume.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { startRedis, type TestRedis } from '../../harness/redis-server.ts';
import { deliver, queuedId, SmtpSession } from '../../harness/smtp-session.ts';
import { createLogger } from '../../src/logger.ts';
import { type TestCertificate, testCertificate } from '../fixtures/tls/test-certificate.ts';

const rightKey = 'secret-reload-right-key';
const wrongKey = 'secret-reload-wrong-key';
const workspaces = [{ identifier: 'ws', ingestEmail: 'documents@ingest.test' }];

/**
 * The secrets a running daemon takes again when their files change, without a signal: the
 * parsing API key (api.apiKeyFile) and the STARTTLS key and certificate.
 */
describe('reloading secrets when their files change', () => {
  let redis: TestRedis;
  let mock: MockApi;
  let mockUrl: string;
  let dir: string;
  let daemon: DaemonProcess | undefined;
  const certificates: TestCertificate[] = [];

  beforeAll(async () => {
    redis = await startRedis();
    mock = createMockApi({
      apiKey: rightKey,
      logger: createLogger({ level: 'silent', destination: new LogSink() }),
    });
    ({ url: mockUrl } = await mock.start({ host: '127.0.0.1', port: 0 }));
  });
  afterEach(async () => {
    daemon?.signal('SIGKILL');
    await daemon?.exited;
    daemon = undefined;
    if (dir) await rm(dir, { recursive: true, force: true });
    for (const certificate of certificates.splice(0)) await certificate.remove();
  });
  afterAll(async () => {
    await mock?.close();
    await redis?.close();
  });

  it('uploads with the key of an API key file updated as a Kubernetes Secret', async () => {
    dir = await mkdtemp(join(tmpdir(), 'secret-reload-'));
    const secrets = await kubernetesVolume(join(dir, 'secrets'), { 'api-key': `${wrongKey}\n` });
    const keyFile = secrets.path('api-key');
    const configPath = join(dir, 'gateway.yaml');
    await writeDaemonConfig(configPath, {
      redis: { url: redis.url, prefix: 'secret-reload-key' },
      api: { baseUrl: mockUrl, apiKeyFile: keyFile },
      upload: { retryBaseDelay: 50 },
      workspaces,
    });
    const running = await startDaemon(configPath);
    daemon = running;

    const message = await composeMessage({
      attachments: [{ filename: 'key-reload.pdf', content: uniquePdf('key-reload') }],
    });
    const id = queuedId((await deliver(running.smtpPort, { to: ['documents@ingest.test'], message })).data);
    // The service refuses the old key: the workers pause and wait for a reload.
    await running.waitFor((line) => line.includes('API key refused'));

    const trigger = nextLogEntry(running, (entry) => entry.msg === 'reloading the configuration');
    await secrets.update({ 'api-key': `${rightKey}\n` });
    expect(await trigger).toMatchObject({ trigger: 'file changed', files: [keyFile] });

    expect((await entrySettled(running.httpUrl, id, 0)).state).toBe('uploaded');
    const upload = mock.uploads.find((seen) => seen.file?.fileName === 'key-reload.pdf');
    expect(upload?.authorization).toBe(`Bearer ${rightKey}`);
    // The key itself is never written to the log.
    expect(running.lines.some((line) => line.includes(rightKey) || line.includes(wrongKey))).toBe(false);
  }, 60_000);

  it('presents a replaced STARTTLS certificate to the next connections, and not one that does not load', async () => {
    dir = await mkdtemp(join(tmpdir(), 'secret-reload-'));
    const [before, after] = [await testCertificate(), await testCertificate()];
    certificates.push(before, after);
    // Without openssl both are the one committed pair: nothing would tell them apart.
    expect(before.generated && after.generated).toBe(true);
    const keyPath = join(dir, 'tls.key');
    const certPath = join(dir, 'tls.crt');
    await writeFile(keyPath, await readFile(before.keyPath));
    await writeFile(certPath, await readFile(before.certPath));
    const configPath = join(dir, 'gateway.yaml');
    await writeDaemonConfig(configPath, {
      smtp: { tls: { key: keyPath, cert: certPath } },
      redis: { url: redis.url, prefix: 'secret-reload-tls' },
      workspaces,
    });
    const running = await startDaemon(configPath);
    daemon = running;
    const original = await presented(running.smtpPort);

    // A certificate that does not load is refused, and the running pair stays.
    const refused = nextLogEntry(
      running,
      (entry) => entry.msg === 'STARTTLS key and certificate not reloaded; the running ones stay',
    );
    await writeFile(certPath, 'not a certificate\n');
    await refused;
    expect(await presented(running.smtpPort)).toBe(original);

    const swapped = nextLogEntry(running, (entry) => entry.msg === 'STARTTLS key and certificate reloaded');
    // As a certificate manager renews: each file written beside and renamed into place.
    for (const [from, to] of [
      [after.keyPath, keyPath],
      [after.certPath, certPath],
    ] as const) {
      await writeFile(`${to}.new`, await readFile(from));
      await rename(`${to}.new`, to);
    }
    await swapped;
    const renewed = await presented(running.smtpPort);
    expect(renewed).not.toBe(original);
    expect(renewed).toBe(new X509Certificate(await readFile(after.certPath)).fingerprint256);
  }, 60_000);
});

/** The SHA-256 fingerprint of the certificate the gateway presents after STARTTLS. */
async function presented(port: number): Promise<string> {
  const session = new SmtpSession(port);
  await session.reply();
  await session.command('EHLO client.test');
  expect((await session.command('STARTTLS')).code).toBe(220);
  const socket = tlsConnect({
    socket: session.socket,
    rejectUnauthorized: false,
    servername: 'gateway.test',
  });
  try {
    await once(socket, 'secureConnect');
    return socket.getPeerX509Certificate()?.fingerprint256 ?? '';
  } finally {
    socket.destroy();
    await session.close();
  }
}
