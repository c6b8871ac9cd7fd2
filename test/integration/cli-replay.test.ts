import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../harness/cli-process.ts';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { deliver, queuedId } from '../../harness/smtp-session.ts';
import { testConfigFile } from '../../harness/test-config.ts';

const run = promisify(execFile);

/**
 * `ingest-gateway replay` through the real binary: stored .eml files, a folder of them and an
 * mbox written by Python's mailbox module go through the intake of a running gateway (real
 * Redis, the mock API), each message gets one line with the reply SMTP would give, the
 * records say via: replay, and the documents reach the API.
 */
describe('replay', () => {
  let harness: Harness;
  let directory: string;
  let configPath: string;

  beforeAll(async () => {
    harness = await startHarness();
    directory = await mkdtemp(join(tmpdir(), 'cli-replay-'));
    configPath = join(directory, 'gateway.yaml');
    await writeFile(
      configPath,
      testConfigFile({
        redis: { url: harness.redis.url, prefix: harness.config.redis.prefix },
        http: { publicUrl: harness.httpUrl },
      }).text,
    );
  });
  afterAll(async () => {
    await harness?.close();
    if (directory) await rm(directory, { recursive: true, force: true });
  });

  const message = (label: string, text = 'Please find the invoice attached.') =>
    composeMessage({
      to: 'documents@ingest.test',
      subject: label,
      text,
      attachments: [{ filename: `${label}.pdf`, content: uniquePdf(label) }],
    });

  /** An mbox of these messages as Python's mailbox module writes one (mboxo: `From ` lines escaped). */
  async function writeMbox(path: string, messages: readonly Buffer[]): Promise<void> {
    const script = [
      'import mailbox, sys',
      'box = mailbox.mbox(sys.argv[1])',
      'for name in sys.argv[2:]:',
      '    m = mailbox.mboxMessage(open(name, "rb").read())',
      '    m.set_from("ann@acme.example", True)',
      '    box.add(m)',
      'box.flush()',
    ].join('\n');
    const files: string[] = [];
    for (const [n, bytes] of messages.entries()) {
      const file = join(directory, `mbox-input-${n}.eml`);
      await writeFile(file, bytes);
      files.push(file);
    }
    await run('python3', ['-c', script, path, ...files]);
  }

  /** The queue ids of the output lines, by the label each line starts with. */
  function replies(stdout: string): Map<string, string> {
    return new Map(
      stdout
        .trim()
        .split('\n')
        .map((line) => {
          const [label = '', reply = ''] = line.split(/ {2}/);
          return [label, reply];
        }),
    );
  }

  const idOf = (reply: string | undefined) => /^250 2\.0\.0 queued as (\S+)$/.exec(reply ?? '')?.[1] ?? '';

  async function raw(id: string): Promise<string> {
    const response = await fetch(`${harness.httpUrl}/v1/messages/${id}/raw`);
    expect(response.status).toBe(200);
    return Buffer.from(await response.arrayBuffer()).toString('latin1');
  }

  it('takes every .eml of a folder and every message of an mbox, each with its line, and the duplicate rule on a second run', async () => {
    const folder = join(directory, 'saved');
    await mkdir(join(folder, 'older'), { recursive: true });
    await writeFile(join(folder, 'a.eml'), await message('replay-a'));
    await writeFile(join(folder, 'older', 'b.eml'), await message('replay-b'));
    await writeFile(join(folder, 'notes.txt'), 'not mail');
    const mbox = join(directory, 'inbox.mbox');
    await writeMbox(mbox, [
      await message('mbox-1'),
      await message('mbox-2', 'Hello,\nFrom the accounts team: the invoice.\nRegards'),
      await message('mbox-3'),
    ]);
    // Python escaped the body line that would read as a separator.
    expect(await readFile(mbox, 'latin1')).toContain('\n>From the accounts team');

    const first = await runCli(['replay', folder, mbox, '--config', configPath]);
    expect(first.code).toBe(0);
    const lines = replies(first.stdout);
    const labels = [
      join(folder, 'a.eml'),
      join(folder, 'older', 'b.eml'),
      `${mbox}#1`,
      `${mbox}#2`,
      `${mbox}#3`,
    ];
    expect([...lines.keys()]).toEqual(labels);
    const ids = labels.map((label) => idOf(lines.get(label)));
    for (const id of ids) expect(id).not.toBe('');

    const names = ['replay-a', 'replay-b', 'mbox-1', 'mbox-2', 'mbox-3'];
    for (const [n, id] of ids.entries()) {
      expect(await harness.settled(id, 0)).toBe('completed');
      const record = await harness.record(id);
      expect(record).toMatchObject({
        via: 'replay',
        subject: names[n],
        envelope: { mailFrom: 'ann@acme.example', rcptTo: ['documents@ingest.test'] },
        remoteAddress: null,
      });
      expect(harness.mock.uploads.some((upload) => upload.file?.fileName === `${names[n]}.pdf`)).toBe(true);
    }
    // The escaped line is the message's own line again, with the CRLF line ends SMTP carries.
    const second = await raw(ids[3] ?? '');
    expect(second).toContain('\r\nFrom the accounts team: the invoice.\r\n');
    expect(second).not.toContain('>From');

    // The same messages to the same recipients: the earlier delivery's queue id, nothing new.
    const uploads = harness.mock.uploads.length;
    const again = await runCli(['replay', mbox, '--config', configPath]);
    expect(again.code).toBe(0);
    expect([...replies(again.stdout).values()].map(idOf)).toEqual(ids.slice(2));
    expect(harness.mock.uploads.length).toBe(uploads);
    // Two runs of the CLI, each a process that loads the intake, and a Python run: a busy
    // machine takes more than the default half minute.
  }, 90_000);

  it('sends to --to and refuses an unknown one with the 550 5.1.1 of RCPT and exit code 1', async () => {
    const file = join(directory, 'to-option.eml');
    await writeFile(file, await message('replay-to'));
    const unknown = await runCli(['replay', file, '--to', 'nobody@ingest.test', '--config', configPath]);
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe(`${file}  550 5.1.1 <nobody@ingest.test>: no such ingest address here\n`);

    const other = await runCli([
      'replay',
      file,
      ...['--to', 'invoices@ingest.test', '--from', 'ap@partner.example'],
      '--config',
      configPath,
    ]);
    expect(other.code).toBe(0);
    const id = idOf(replies(other.stdout).get(file));
    expect(await harness.record(id)).toMatchObject({
      via: 'replay',
      envelope: { mailFrom: 'ap@partner.example', rcptTo: ['invoices@ingest.test'] },
      workspaces: [{ identifier: 'ws-acme', admitted: true }],
    });
  });

  it('refuses what SMTP refuses at DATA: a sender the allow-list does not admit', async () => {
    const file = join(directory, 'stranger.eml');
    await writeFile(
      file,
      await composeMessage({
        from: 'eve@elsewhere.example',
        to: 'invoices@ingest.test',
        attachments: [{ filename: 'x.pdf', content: uniquePdf('stranger') }],
      }),
    );
    const refused = await runCli(['replay', file, '--config', configPath]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(new RegExp(`^${file}  550 5\\.7\\.1 `));
  });

  it('shows its progress on a terminal, counting the messages of an mbox first', async () => {
    const mbox = join(directory, 'progress.mbox');
    await writeMbox(mbox, [await message('progress-1'), await message('progress-2')]);
    const cli = await runCli(['replay', mbox, '--config', configPath], { terminal: true });
    expect(cli.code).toBe(0);
    // On a terminal stderr and stdout are the same pseudo-terminal, so both arrive in stdout.
    const rewrite = '\r\u001b[2K';
    const steps = cli.stdout.split(rewrite).filter((text) => text.startsWith('replaying: '));
    expect(steps).toEqual(['replaying: 0/2', 'replaying: 1/2', 'replaying: 2/2']);
    expect(cli.stdout).toMatch(new RegExp(`${mbox}#2  250 2\\.0\\.0 queued as `));
  });

  it('leaves via out of the record of mail received over SMTP', async () => {
    const id = queuedId(
      (
        await deliver(harness.smtpPort, {
          to: ['documents@ingest.test'],
          message: await message('over-smtp'),
        })
      ).data,
    );
    expect(await harness.record(id)).not.toHaveProperty('via');
  });
});
