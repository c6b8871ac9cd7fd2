import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMockApi } from '@ingest-gateway/mock-parsing-api';
import { createLogger } from '../src/logger.ts';
import { startDaemon, writeDaemonConfig } from './daemon-process.ts';
import { startDnsServer } from './dns-server.ts';
import { LogSink } from './gateway-harness.ts';
import { AUTHENTICATED_RECIPIENT, type HostileMessage, OPEN_RECIPIENT } from './hostile-messages.ts';
import { startRedis } from './redis-server.ts';
import { dataPayload } from './smtp-session.ts';
import { deliverProbed, type ProbedOutcome } from './stall-probe.ts';

/**
 * The gateway that hostile messages (harness/hostile-messages.ts) are sent to: the
 * daemon in its own process, so that a stall probe (harness/stall-probe.ts) times its
 * event loop and nothing of the sender's, with its own redis-server, a mock parsing API in
 * the calling process, and a DNS server that knows no name (sender authentication then runs
 * its whole course without a network).
 */
export interface HostileGateway {
  readonly smtpPort: number;
  /**
   * Builds `message` and its DATA payload, then sends it while a stall probe watches: the
   * reply to its final dot, the probe's slowest NOOP round trip and the most CPU the daemon's
   * event loop spent while one NOOP waited, in ms.
   */
  deliver(message: HostileMessage): Promise<ProbedOutcome>;
  /** How many files the mock API has received. */
  uploads(): number;
  /** The daemon's resident memory now, and at its peak so far, in MiB (Linux /proc). */
  memoryMiB(): Promise<{ rss: number; peak: number }>;
  close(): Promise<void>;
}

const apiKey = 'hostile-test-key';

/**
 * `role` smtp leaves uploads out of the process that is timed (the benchmark); `all` uploads
 * what is taken, as a single-process deployment does.
 */
export async function startHostileGateway(role: 'all' | 'smtp'): Promise<HostileGateway> {
  const redis = await startRedis();
  const dns = await startDnsServer({});
  const mock = createMockApi({
    apiKey,
    logger: createLogger({ level: 'silent', destination: new LogSink() }),
  });
  const { url } = await mock.start({ host: '127.0.0.1', port: 0 });
  const dir = await mkdtemp(join(tmpdir(), 'hostile-'));
  const configPath = join(dir, 'gateway.yaml');
  await writeDaemonConfig(configPath, {
    smtp: { maxPartSize: 1_000_000 },
    redis: { url: redis.url, prefix: 'hostile' },
    api: { baseUrl: url, apiKey },
    dns: { servers: [dns.address] },
    workspaces: [
      { identifier: 'ws-open', ingestEmail: OPEN_RECIPIENT },
      { identifier: 'ws-auth', ingestEmail: AUTHENTICATED_RECIPIENT, senderAuthentication: 'aligned' },
    ],
  });
  // Every step is attempted, whichever fails.
  const closeServices = async () => {
    await Promise.allSettled([
      mock.close(),
      dns.close(),
      redis.close(),
      rm(dir, { recursive: true, force: true }),
    ]);
  };
  const daemon = await startDaemon(configPath, role).catch(async (err: unknown) => {
    await closeServices();
    throw err;
  });
  let closing: Promise<void> | undefined;
  return {
    smtpPort: daemon.smtpPort,
    async deliver(message) {
      const payload = dataPayload(await message.build());
      return deliverProbed(daemon.smtpPort, daemon.pid, { to: message.to, payload });
    },
    uploads: () => mock.uploads.length,
    async memoryMiB() {
      const status = await readFile(`/proc/${daemon.pid}/status`, 'utf8');
      const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
      return { rss: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024 };
    },
    close() {
      closing ??= (async () => {
        daemon.signal('SIGTERM');
        await daemon.exited;
        await closeServices();
      })();
      return closing;
    },
  };
}
