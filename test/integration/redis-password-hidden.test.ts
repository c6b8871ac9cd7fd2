import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../harness/cli-process.ts';
import { writeDaemonConfig } from '../../harness/daemon-process.ts';
import { freeLoopbackPort } from '../../src/redis/local-redis-server.ts';

/**
 * A start that finds no Redis says where it looked and what to do, and never prints the
 * password of the Redis URL: the output of a failed start ends up in terminals, CI logs and
 * bug reports.
 */
describe('a daemon that finds no Redis at a URL with a password', () => {
  let dir: string;
  const password = `pw${randomBytes(12).toString('hex')}`;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'redis-password-'));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** `start` against a URL with the password where nothing listens; its whole output. */
  async function startWithoutRedis(startLocal: boolean, env: Record<string, string> = {}) {
    const port = await freeLoopbackPort();
    const configPath = join(dir, `start-local-${startLocal}.yaml`);
    await writeDaemonConfig(configPath, { redis: { startLocal }, api: { mock: true } });
    const run = await runCli(['start', '--config', configPath], {
      // The password the way operators give it; the most verbose log, so no line is missed.
      env: { REDIS_URL: `redis://gateway:${password}@127.0.0.1:${port}`, LOG_LEVEL: 'trace', ...env },
    });
    return { port, code: run.code, output: `${run.stdout}\n${run.stderr}` };
  }

  it('names the host and port it tried, without the password, when Redis is down', async () => {
    const { port, code, output } = await startWithoutRedis(false);
    expect(code).toBe(1);
    expect(output).toContain(`Redis does not answer at redis://gateway:***@127.0.0.1:${port}`);
    expect(output).not.toContain(password);
  }, 60_000);

  it('says that redis-server is missing and how to get one, without the password, with redis.startLocal', async () => {
    // Only the directory of the project's Node: no redis-server to be found.
    const { port, code, output } = await startWithoutRedis(true, { PATH: dirname(process.execPath) });
    expect(code).toBe(1);
    expect(output).toContain(`no Redis answers at redis://gateway:***@127.0.0.1:${port}`);
    expect(output).toContain('no redis-server is installed');
    expect(output).toContain('apt-get install redis-server');
    expect(output).not.toContain(password);
  }, 60_000);
});
