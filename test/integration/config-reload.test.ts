import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { nextLogEntry } from '../../harness/daemon-log.ts';
import { type DaemonProcess, startDaemon, writeDaemonConfig } from '../../harness/daemon-process.ts';
import { until } from '../../harness/http-state.ts';
import { kubernetesVolume } from '../../harness/kubernetes-volume.ts';
import { startRedis, type TestRedis } from '../../harness/redis-server.ts';
import { SmtpSession } from '../../harness/smtp-session.ts';
import { type TestConfigInput, testConfigFile, type WorkspaceInput } from '../../harness/test-config.ts';

const first: WorkspaceInput = { identifier: 'ws-first', ingestEmail: 'documents@ingest.test' };
const added: WorkspaceInput = { identifier: 'ws-added', ingestEmail: 'added@ingest.test' };

/**
 * Reload without a signal: the daemon watches its configuration file and reloads when it
 * changes as editors and Kubernetes change it; no test sends SIGHUP. The API key file and the
 * STARTTLS certificate: secret-reload.test.ts.
 */
describe('reloading the configuration when its file changes', () => {
  let redis: TestRedis;
  let dir: string;
  let daemon: DaemonProcess | undefined;

  beforeAll(async () => {
    redis = await startRedis();
  });
  afterEach(async () => {
    daemon?.signal('SIGKILL');
    await daemon?.exited;
    daemon = undefined;
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  afterAll(async () => {
    await redis?.close();
  });

  /** The configuration as a test writes it: its own key prefix, the mock API, `workspaces`. */
  function settings(name: string, workspaces: WorkspaceInput[]): TestConfigInput {
    return { redis: { url: redis.url, prefix: `reload-${name}` }, workspaces };
  }

  async function startIn(configPath: string): Promise<DaemonProcess> {
    daemon = await startDaemon(configPath);
    return daemon;
  }

  const reloaded = (running: DaemonProcess) =>
    nextLogEntry(running, (entry) => entry.msg?.startsWith('configuration reloaded:') === true);

  /** The reply to RCPT TO:<to> in a new session. */
  async function rcpt(port: number, to: string): Promise<number> {
    const session = new SmtpSession(port);
    try {
      await session.reply();
      await session.command('EHLO client.test');
      await session.command('MAIL FROM:<ann@acme.example>');
      return (await session.command(`RCPT TO:<${to}>`)).code;
    } finally {
      await session.close();
    }
  }

  it('takes a workspace added by editing the file in place, and says which file', async () => {
    dir = await mkdtemp(join(tmpdir(), 'reload-'));
    const configPath = join(dir, 'gateway.yaml');
    await writeDaemonConfig(configPath, settings('inplace', [first]));
    const running = await startIn(configPath);
    expect(await rcpt(running.smtpPort, 'added@ingest.test')).toBe(550);

    const trigger = nextLogEntry(running, (entry) => entry.msg === 'reloading the configuration');
    const done = reloaded(running);
    await writeDaemonConfig(configPath, settings('inplace', [first, added]));
    expect(await trigger).toMatchObject({ trigger: 'file changed', files: [configPath] });
    await done;
    expect(await rcpt(running.smtpPort, 'added@ingest.test')).toBe(250);
    // Never a signal: the only reloads are the watch's.
    expect(running.lines.some((line) => line.includes('SIGHUP'))).toBe(false);
    // The watch is a step of the shutdown: the daemon stops cleanly with it open.
    running.signal('SIGTERM');
    expect(await running.exited).toBe(0);
  }, 60_000);

  it('takes a file written elsewhere and renamed over the original', async () => {
    dir = await mkdtemp(join(tmpdir(), 'reload-'));
    const configPath = join(dir, 'gateway.yaml');
    await writeDaemonConfig(configPath, settings('rename', [first]));
    const running = await startIn(configPath);

    const done = reloaded(running);
    await writeDaemonConfig(join(dir, '.gateway.yaml.swp'), settings('rename', [first, added]));
    await rename(join(dir, '.gateway.yaml.swp'), configPath);
    await done;
    expect(await rcpt(running.smtpPort, 'added@ingest.test')).toBe(250);
  }, 60_000);

  it('takes a Kubernetes ConfigMap update: the ..data symlink swapped to a new directory', async () => {
    dir = await mkdtemp(join(tmpdir(), 'reload-'));
    const yaml = (workspaces: WorkspaceInput[]) => testConfigFile(settings('configmap', workspaces)).text;
    const volume = await kubernetesVolume(join(dir, 'config'), { 'gateway.yaml': yaml([first]) });
    const running = await startIn(volume.path('gateway.yaml'));
    expect(await rcpt(running.smtpPort, 'added@ingest.test')).toBe(550);

    const done = reloaded(running);
    await volume.update({ 'gateway.yaml': yaml([first, added]) });
    await done;
    expect(await rcpt(running.smtpPort, 'added@ingest.test')).toBe(250);
  }, 60_000);

  it('keeps the running configuration when the new file is invalid, and takes the next valid one', async () => {
    dir = await mkdtemp(join(tmpdir(), 'reload-'));
    const configPath = join(dir, 'gateway.yaml');
    await writeDaemonConfig(configPath, settings('invalid', [first]));
    const running = await startIn(configPath);

    const refused = nextLogEntry(
      running,
      (entry) => entry.msg === 'configuration not reloaded; the running one stays',
    );
    await writeFile(configPath, stringify({ smtp: { port: 'not a port' }, workspaces: [] }));
    expect((await refused).problems?.length).toBeGreaterThan(0);
    expect(await rcpt(running.smtpPort, 'documents@ingest.test')).toBe(250);
    expect(await metric(running.httpUrl, 'ingest_gateway_config_reloads_total{outcome="refused"}')).toBe(1);

    const done = reloaded(running);
    await writeDaemonConfig(configPath, settings('invalid', [first, added]));
    await done;
    expect(await rcpt(running.smtpPort, 'added@ingest.test')).toBe(250);
    expect(await metric(running.httpUrl, 'ingest_gateway_config_reloads_total{outcome="applied"}')).toBe(1);
  }, 60_000);
});

/** One sample of the daemon's /metrics (loopback: no token). */
async function metric(httpUrl: string, series: string): Promise<number> {
  const text = await until(
    `${series} in /metrics`,
    async () => (await fetch(`${httpUrl}/metrics`)).text(),
    (body) => body.includes(series),
  );
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return Number(line?.split(' ')[1]);
}
