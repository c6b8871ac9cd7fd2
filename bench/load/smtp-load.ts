import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { dataPayload, SmtpSession } from '../../harness/smtp-session.ts';
import { BENCH_RECIPIENT, numberedRecipient } from '../bench-config.ts';
import { canPin } from '../measure/process-stats.ts';

const run = promisify(execFile);

/**
 * The load: Postfix's `smtp-source` when it is installed (a C client that costs its core
 * little), the benchmark's own client otherwise. Either writes the `n`th message of a run to
 * `<n>documents@ingest.test`, as `smtp-source -N` does, so every message is a delivery of
 * its own. The load runs on the core the servers are not pinned to.
 */

const SMTP_SOURCE = '/usr/sbin/smtp-source';
/** The core the load runs on; the servers get core 0. */
export const LOAD_CORE = 1;
export const SERVER_CORE = 0;

export interface LoadOptions {
  port: number;
  /** The message file (LF line endings), as bench/load/pdf-message.ts writes it. */
  file: string;
  messages: number;
  /** Sessions in parallel. */
  sessions: number;
  /** true: each session sends its share over one connection; false: one message per connection. */
  reuse: boolean;
}

export interface LoadResult {
  /** Wall time from the first connection to the last reply, in s. */
  seconds: number;
  client: 'smtp-source' | 'own client';
}

/**
 * Whether smtp-source is there to run. Not by running it: without arguments it exits through
 * its fatal-error path, which sleeps a second, and a synchronous spawn would hold up this
 * process (and the stall probe in it) for that second.
 */
export function smtpSourceInstalled(): boolean {
  try {
    accessSync(SMTP_SOURCE, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  return smtpSourceInstalled() ? runSmtpSource(options) : runOwnClient(options);
}

/** The smtp-source command line for `options` (pinned to the load's core when there is one). */
export function smtpSourceArgs(options: LoadOptions): string[] {
  const args = [
    '-N',
    ...(options.reuse ? ['-d'] : []),
    '-s',
    String(options.sessions),
    '-m',
    String(options.messages),
    '-F',
    options.file,
    '-f',
    'bench@acme.example',
    '-t',
    BENCH_RECIPIENT,
    `127.0.0.1:${options.port}`,
  ];
  return canPin()
    ? ['taskset', '--cpu-list', String(LOAD_CORE), SMTP_SOURCE, ...args]
    : [SMTP_SOURCE, ...args];
}

async function runSmtpSource(options: LoadOptions): Promise<LoadResult> {
  const [command = SMTP_SOURCE, ...args] = smtpSourceArgs(options);
  const started = performance.now();
  // smtp-source exits non-zero at the first reply it did not expect (no -A).
  await run(command, args, { maxBuffer: 1024 * 1024 });
  return { seconds: (performance.now() - started) / 1000, client: 'smtp-source' };
}

/** The same transactions from this process: HELO, MAIL, RCPT, DATA per message. */
export async function runOwnClient(options: LoadOptions): Promise<LoadResult> {
  const message = await readFile(options.file);
  const payload = dataPayload(Buffer.from(message.toString('latin1').replace(/\n/g, '\r\n'), 'latin1'));
  let sequence = 0;
  const started = performance.now();
  const session = async (): Promise<void> => {
    let connection: SmtpSession | null = null;
    while (sequence < options.messages) {
      sequence += 1;
      const recipient = numberedRecipient(sequence);
      if (connection === null) {
        connection = new SmtpSession(options.port);
        await expect(connection.reply(), 220);
        await expect(connection.command('HELO bench.test'), 250);
      }
      await expect(connection.command('MAIL FROM:<bench@acme.example>'), 250);
      await expect(connection.command(`RCPT TO:<${recipient}>`), 250);
      await expect(connection.command('DATA'), 354);
      await expect(connection.sendPayload(payload), 250);
      if (!options.reuse) {
        await connection.close();
        connection = null;
      }
    }
    await connection?.close();
  };
  await Promise.all(Array.from({ length: options.sessions }, session));
  return { seconds: (performance.now() - started) / 1000, client: 'own client' };
}

async function expect(reply: Promise<{ code: number; text: string }>, code: number): Promise<void> {
  const got = await reply;
  if (got.code !== code) throw new Error(`expected ${code}, got ${got.text}`);
}
