import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { runCli } from '../../harness/cli-process.ts';
import { type DaemonProcess, startDaemon } from '../../harness/daemon-process.ts';
import { startRedis, type TestRedis } from '../../harness/redis-server.ts';

/**
 * The README's quick start, as a newcomer runs it: the gateway started from the committed
 * config/gateway.yaml (only its ports from 0 and a Redis of the test's own), and
 * `ingest-gateway send --wait` with the PDF the repository ships. The mock parses it and
 * pushes the outcome by resthook, so the output ends at "parsed".
 */
describe('the first run ends at "parsed"', () => {
  let redis: TestRedis;
  let daemon: DaemonProcess;
  let dir: string;

  beforeAll(async () => {
    redis = await startRedis();
    dir = await mkdtemp(join(tmpdir(), 'first-run-'));
    const committed = parse(await readFile('config/gateway.yaml', 'utf8')) as Record<
      string,
      Record<string, unknown>
    >;
    const config = {
      ...committed,
      smtp: { ...committed.smtp, port: 0 },
      http: { ...committed.http, port: 0 },
      redis: { ...committed.redis, url: redis.url, startLocal: false },
    };
    const path = join(dir, 'gateway.yaml');
    await writeFile(path, stringify(config));
    daemon = await startDaemon(path);
  });
  afterAll(async () => {
    if (daemon) {
      daemon.signal('SIGTERM');
      await daemon.exited;
    }
    await redis?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('send --wait with examples/invoice.pdf prints the document parsed', async () => {
    const run = await runCli([
      'send',
      ...['--server', `127.0.0.1:${daemon.smtpPort}`, '--http', daemon.httpUrl],
      ...['--from', 'you@example.com', '--to', 'documents@ingest.localhost'],
      ...['--attach', 'examples/invoice.pdf', '--wait', '30'],
    ]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^250 .*\nqueue id: \w+\nstate\tfile\tworkspace\tdocument or reason\n/);
    expect(run.stdout).toMatch(/\nparsed\tinvoice\.pdf\tsample-workspace\t\S+\n$/);
  });
});
