import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonProcess, startDaemon, writeDaemonConfig } from '../../harness/daemon-process.ts';
import { startDnsServer, type TestDnsServer } from '../../harness/dns-server.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { startRedis, type TestRedis } from '../../harness/redis-server.ts';
import { deliver } from '../../harness/smtp-session.ts';
import type { TestConfigInput } from '../../harness/test-config.ts';

const recorder = fileURLToPath(new URL('../../harness/record-loaded-modules.ts', import.meta.url));

/**
 * mailauth and what it brings (the Public Suffix List, Joi) are a fifth of an idle daemon's
 * memory: a daemon whose workspaces do not authenticate senders (the default) must never load
 * them, and one whose workspaces do loads them at start, before it listens, and authenticates.
 * The daemon runs as operators run it, with a hook that lists every module it loads.
 */
describe('when the daemon loads mailauth', () => {
  let redis: TestRedis;
  let dns: TestDnsServer;
  let dir: string;
  let daemon: DaemonProcess | undefined;

  beforeAll(async () => {
    redis = await startRedis();
    // acme.example sends from the test client's 127.0.0.1; other.example publishes nothing.
    dns = await startDnsServer({ 'acme.example': { rcode: 'NOERROR', txt: ['v=spf1 ip4:127.0.0.1 -all'] } });
    dir = await mkdtemp(join(tmpdir(), 'mailauth-loading-'));
  });
  afterEach(async () => {
    daemon?.signal('SIGKILL');
    await daemon?.exited;
    daemon = undefined;
  });
  afterAll(async () => {
    await dns?.close();
    await redis?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Starts `--role smtp` with this `auth:` section; `loaded()` lists the modules it has loaded so far. */
  async function start(name: string, auth: TestConfigInput['auth']) {
    const configPath = join(dir, `${name}.yaml`);
    const listPath = join(dir, `${name}.modules`);
    await writeDaemonConfig(configPath, {
      redis: { url: redis.url },
      // Every name is answered (NXDOMAIN or records): a timeout short enough to be reached by
      // busy cores would turn an answer into a temporary error, and 250 or 550 into 451.
      dns: { servers: [dns.address], timeout: 10_000, tries: 1 },
      ...(auth ? { auth } : {}),
      workspaces: [{ identifier: 'ws', ingestEmail: 'documents@ingest.test' }],
    });
    daemon = await startDaemon(configPath, 'smtp', 'info', {
      NODE_OPTIONS: `--import ${recorder}`,
      LOADED_MODULES_FILE: listPath,
    });
    const loaded = async () => (await readFile(listPath, 'utf8')).split('\n').filter(Boolean);
    return { daemon, loaded };
  }

  const fromMailauth = (urls: string[]) => urls.filter((url) => url.includes('/node_modules/mailauth/'));

  async function send(port: number, from: string) {
    const message = await composeMessage({
      from,
      to: 'documents@ingest.test',
      attachments: [{ filename: 'invoice.pdf', content: uniquePdf(from), contentType: 'application/pdf' }],
    });
    const { data } = await deliver(port, {
      from: 'bounce@acme.example',
      to: ['documents@ingest.test'],
      message,
    });
    return data;
  }

  it('never loads it while every workspace leaves senderAuthentication off', async () => {
    const { daemon, loaded } = await start('off', undefined);
    expect(await send(daemon.smtpPort, 'Ann <ann@other.example>')).toMatchObject({ code: 250 });
    const urls = await loaded();
    // The hook saw the daemon's dependencies: the list is not empty for another reason.
    expect(urls.some((url) => url.includes('/node_modules/smtp-server/'))).toBe(true);
    expect(fromMailauth(urls)).toEqual([]);
  }, 60_000);

  it('loads it at start when authentication is on, before the first message, and authenticates', async () => {
    const { daemon, loaded } = await start('aligned', { senderAuthentication: 'aligned' });
    // Loading it is one synchronous step of hundreds of ms: done before SMTP listens, it holds
    // up no session.
    expect(fromMailauth(await loaded())).toEqual(
      expect.arrayContaining([expect.stringMatching(/\/mailauth\/lib\/mailauth\.js$/)]),
    );

    expect(await send(daemon.smtpPort, 'Ann <ann@acme.example>')).toMatchObject({ code: 250 });
    // SPF passes for acme.example only: a From of other.example is not authenticated.
    const refused = await send(daemon.smtpPort, 'Ann <ann@other.example>');
    expect(refused?.code).toBe(550);
    expect(refused?.text).toContain('the From domain other.example is not aligned');
  }, 60_000);
});
