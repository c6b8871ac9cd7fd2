import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMockApi, type MockApi } from '@ingest-gateway/mock-parsing-api';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonProcess, startDaemon, writeDaemonConfig } from '../../harness/daemon-process.ts';
import { LogSink } from '../../harness/gateway-harness.ts';
import { startRedis, type TestRedis } from '../../harness/redis-server.ts';
import type { TestConfigInput } from '../../harness/test-config.ts';
import { createLogger } from '../../src/logger.ts';

const recorder = fileURLToPath(new URL('../../harness/record-loaded-modules.ts', import.meta.url));
const repository = new URL('../../', import.meta.url).href;
/** Where the mock's modules load from: node follows the workspace's link to its folder. */
const MOCK_SOURCES = 'packages/mock-parsing-api/src/';
const apiKey = 'loading-test-key';

/**
 * The mock parsing API (packages/mock-parsing-api) is a quarter of the source: a daemon that
 * uploads to the service must not load it. The daemon runs as operators run it, with a hook that lists every module it loads.
 */
describe('which modules the daemon loads', () => {
  let redis: TestRedis;
  let upstream: MockApi;
  let upstreamUrl: string;
  let dir: string;
  let daemon: DaemonProcess | undefined;

  beforeAll(async () => {
    redis = await startRedis();
    upstream = createMockApi({
      apiKey,
      logger: createLogger({ level: 'silent', destination: new LogSink() }),
    });
    ({ url: upstreamUrl } = await upstream.start({ host: '127.0.0.1', port: 0 }));
    dir = await mkdtemp(join(tmpdir(), 'loading-'));
  });
  afterEach(async () => {
    daemon?.signal('SIGKILL');
    await daemon?.exited;
    daemon = undefined;
  });
  afterAll(async () => {
    await upstream?.close();
    await redis?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /**
   * Starts the daemon with this `api:` section, stops it, and returns the files of this
   * repository it loaded (src/ and packages/), relative to the repository.
   */
  async function loadedSourceFiles(name: string, api: TestConfigInput['api']): Promise<string[]> {
    const configPath = join(dir, `${name}.yaml`);
    const listPath = join(dir, `${name}.modules`);
    await writeDaemonConfig(configPath, {
      redis: { url: redis.url },
      api,
      workspaces: [{ identifier: 'ws', ingestEmail: 'documents@ingest.test' }],
    });
    const running = await startDaemon(configPath, 'all', 'info', {
      NODE_OPTIONS: `--import ${recorder}`,
      LOADED_MODULES_FILE: listPath,
    });
    daemon = running;
    running.signal('SIGTERM');
    expect(await running.exited).toBe(0);
    const urls = (await readFile(listPath, 'utf8')).split('\n').filter(Boolean);
    return urls
      .filter((url) => url.startsWith(repository) && !url.includes('/node_modules/'))
      .map((url) => url.slice(repository.length));
  }

  it('does not load the mock API when it uploads to the configured service', async () => {
    const files = await loadedSourceFiles('service', { baseUrl: upstreamUrl, apiKey });
    // The hook saw the daemon's own modules: the list is not empty for another reason.
    expect(files).toEqual(expect.arrayContaining(['src/main.ts', 'src/gateway.ts', 'src/cli.ts']));
    expect(files.filter((file) => file.startsWith(MOCK_SOURCES))).toEqual([]);
  }, 30_000);

  it('loads the mock API in mock mode', async () => {
    const files = await loadedSourceFiles('mock', { mock: true });
    expect(files).toContain(`${MOCK_SOURCES}create-mock-api.ts`);
  }, 30_000);
});
