import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, constants, openSync, readSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeDaemonConfig } from '../../harness/daemon-process.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { startRedis, type TestRedis } from '../../harness/redis-server.ts';
import { SmtpSession } from '../../harness/smtp-session.ts';

/** More log than a pipe holds (64 KiB on Linux): 300 lines of over 500 bytes. */
const messages = 300;
const sender = `${'a'.repeat(200)}@acme.example`;

/**
 * The daemon's log goes to stdout, which a log collector reads. A collector that stops reading
 * (stuck, or the container runtime's pipe full) must not stall the gateway: the sessions are
 * answered while the lines wait, and once the collector reads again every line arrives.
 */
describe('a log reader that stops reading', () => {
  let redis: TestRedis;
  let dir: string;
  let child: ChildProcess | undefined;

  beforeAll(async () => {
    redis = await startRedis();
    dir = await mkdtemp(join(tmpdir(), 'log-stall-'));
  });
  afterAll(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
    await redis?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('stalls no session, and loses no line once it reads again', { timeout: 90_000 }, async () => {
    const configPath = join(dir, 'gateway.yaml');
    await writeDaemonConfig(configPath, {
      redis: { url: redis.url },
      workspaces: [{ identifier: 'ws', ingestEmail: 'documents@ingest.test' }],
    });
    // A FIFO, not the socket pair Node gives a child for 'pipe' (whose buffers hold megabytes):
    // the kernel's pipe buffer is what a collector that stops reading leaves the daemon.
    const fifo = join(dir, 'stdout');
    execFileSync('mkfifo', [fifo]);
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const writer = openSync(fifo, constants.O_WRONLY);
    const daemon = spawn(
      process.execPath,
      ['src/cli.ts', 'start', '--config', configPath, '--role', 'smtp'],
      {
        stdio: ['ignore', writer, 'inherit'],
        env: { ...process.env, LOG_LEVEL: 'info' },
      },
    );
    child = daemon;
    closeSync(writer);
    let text = '';
    const chunk = Buffer.alloc(64 * 1024);
    /** Reads what the pipe holds now, without waiting. */
    const drain = () => {
      for (;;) {
        try {
          const read = readSync(reader, chunk);
          if (read === 0) return;
          text += chunk.toString('utf8', 0, read);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'EAGAIN') return;
          throw err;
        }
      }
    };
    const linesOf = (msg: string) =>
      text
        .split('\n')
        .slice(0, -1)
        .map((line) => JSON.parse(line) as { msg?: string; port?: number })
        .filter((entry) => entry.msg === msg);
    // Read up to the ready line, then stop reading: the pipe fills and stays full.
    while (linesOf('ready: send a test mail').length === 0) {
      if (daemon.exitCode !== null) throw new Error(`the daemon exited: ${text}`);
      drain();
      await new Promise((wake) => setTimeout(wake, 20));
    }
    const port = linesOf('smtp listening')[0]?.port ?? 0;
    const message = await composeMessage({
      from: sender,
      attachments: [{ filename: 'invoice.pdf', content: uniquePdf('log-stall') }],
    });
    const session = new SmtpSession(port);
    let accepted = 0;
    try {
      expect((await session.reply()).code).toBe(220);
      await session.command('EHLO client.test');
      for (let i = 0; i < messages; i += 1) {
        expect((await session.command(`MAIL FROM:<${sender}>`)).code).toBe(250);
        expect((await session.command('RCPT TO:<documents@ingest.test>')).code).toBe(250);
        const reply = await session.data(Buffer.concat([Buffer.from(`X-Sequence: ${i}\r\n`), message]));
        if (reply.code === 250) accepted += 1;
      }
    } finally {
      await session.close();
    }
    expect(accepted).toBe(messages);
    // Reading again: every line the daemon logged meanwhile arrives, none dropped.
    while (linesOf('message accepted').length < messages) {
      drain();
      await new Promise((wake) => setTimeout(wake, 20));
    }
    expect(linesOf('message accepted')).toHaveLength(messages);
    expect(text.length).toBeGreaterThan(128 * 1024);
    daemon.kill('SIGTERM');
    const exited = once(daemon, 'exit');
    while (daemon.exitCode === null) {
      drain();
      await new Promise((wake) => setTimeout(wake, 20));
    }
    const [code] = await exited;
    expect(code).toBe(0);
    closeSync(reader);
  });
});
