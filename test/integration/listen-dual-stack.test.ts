import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonProcess, startDaemon, writeDaemonConfig } from '../../harness/daemon-process.ts';
import { getJson, until } from '../../harness/http-state.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { startRedis, type TestRedis } from '../../harness/redis-server.ts';
import { queuedId, SmtpSession } from '../../harness/smtp-session.ts';
import type { MessageRecord } from '../../src/record/message-record.ts';

const token = 'dual-stack-http-token';

/**
 * A daemon listening on `::`, as the container's configuration has it: one socket takes IPv4
 * and IPv6 clients, for SMTP and the HTTP API, and an IPv4 client is recorded as the IPv4
 * address it is. Needs the machine's IPv6 loopback (::1), as CI's and the container's have.
 */
describe('listening on :: (every interface, both families)', () => {
  let redis: TestRedis;
  let dir: string;
  let daemon: DaemonProcess;

  beforeAll(async () => {
    redis = await startRedis();
    dir = await mkdtemp(join(tmpdir(), 'dual-stack-'));
    const configPath = join(dir, 'gateway.yaml');
    await writeDaemonConfig(configPath, {
      smtp: { host: '::' },
      http: { host: '::', token },
      redis: { url: redis.url, prefix: 'dual-stack' },
    });
    daemon = await startDaemon(configPath);
  });
  afterAll(async () => {
    daemon?.signal('SIGTERM');
    await daemon?.exited;
    await redis?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** One message from `host`; resolves with its queue id. */
  async function sendFrom(host: string, label: string): Promise<string> {
    const session = new SmtpSession(daemon.smtpPort, host);
    try {
      expect((await session.reply()).code).toBe(220);
      await session.command('EHLO client.test');
      expect((await session.command('MAIL FROM:<ann@acme.example>')).code).toBe(250);
      expect((await session.command('RCPT TO:<documents@ingest.test>')).code).toBe(250);
      const message = await composeMessage({
        attachments: [{ filename: `${label}.pdf`, content: uniquePdf(label) }],
      });
      return queuedId(await session.data(message));
    } finally {
      await session.close();
    }
  }

  it('says it listens on ::', async () => {
    const line = await daemon.waitFor((candidate) => candidate.includes('"msg":"smtp listening"'));
    expect(JSON.parse(line)).toMatchObject({ host: '::', port: daemon.smtpPort });
  });

  it('takes mail over IPv4 and IPv6, recording the IPv4 client without the ::ffff: prefix', async () => {
    const overIpv4 = await sendFrom('127.0.0.1', 'over-ipv4');
    const overIpv6 = await sendFrom('::1', 'over-ipv6');
    const port = new URL(daemon.httpUrl).port;
    // The HTTP API on the same :: answers over both families too.
    for (const [base, id, address] of [
      [`http://127.0.0.1:${port}`, overIpv4, '127.0.0.1'],
      [`http://[::1]:${port}`, overIpv6, '::1'],
    ] as const) {
      const { body } = await until(
        `the record of ${id} at ${base}`,
        () => getJson<MessageRecord>(`${base}/v1/messages/${id}`, token),
        ({ status }) => status === 200,
      );
      expect(body?.remoteAddress).toBe(address);
    }
  });
});
