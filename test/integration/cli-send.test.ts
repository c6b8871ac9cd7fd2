import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../harness/cli-process.ts';
import { type Harness, startHarness, startTlsHarness } from '../../harness/gateway-harness.ts';
import { uniquePdf } from '../../harness/messages.ts';
import type { WorkspaceInput } from '../../harness/test-config.ts';
import type { MessageRecord } from '../../src/record/message-record.ts';

/**
 * `ingest-gateway send` through the real binary against a real gateway (Redis, the mock API):
 * what the options put in the mail is what the gateway received, the 250 reply's queue id is
 * printed, and --wait prints the document identifiers the uploads got.
 */

const HTTP_TOKEN = 'cli-send-http-token-3c9e71';

const workspaces: WorkspaceInput[] = [
  { identifier: 'ws-open', ingestEmail: 'documents@ingest.test' },
  { identifier: 'ws-copies', ingestEmail: 'copies@ingest.test' },
  { identifier: 'ws-archive', ingestEmail: 'archive@ingest.test' },
];

let directory: string;
beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'cli-send-'));
});
afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

async function file(name: string, content: Buffer | string): Promise<string> {
  const path = join(directory, name);
  await writeFile(path, content);
  return path;
}

function queueIdIn(stdout: string): string {
  const id = /^queue id: ([0-9a-z]+)$/m.exec(stdout)?.[1];
  if (id === undefined) throw new Error(`no queue id in:\n${stdout}`);
  return id;
}

describe('ingest-gateway send', () => {
  let harness: Harness;
  let server: string;

  beforeAll(async () => {
    harness = await startHarness({ workspaces, http: { token: HTTP_TOKEN } });
    server = `127.0.0.1:${harness.smtpPort}`;
  });
  afterAll(async () => {
    await harness?.close();
  });

  /** The gateway's record of a message; harness.record() sends no token. */
  async function record(id: string): Promise<MessageRecord> {
    const response = await fetch(`${harness.httpUrl}/v1/messages/${id}`, {
      headers: { authorization: `Bearer ${HTTP_TOKEN}` },
    });
    expect(response.status).toBe(200);
    return (await response.json()) as MessageRecord;
  }

  async function raw(id: string): Promise<Buffer> {
    const response = await fetch(`${harness.httpUrl}/v1/messages/${id}/raw`, {
      headers: { authorization: `Bearer ${HTTP_TOKEN}` },
    });
    expect(response.status).toBe(200);
    return Buffer.from(await response.arrayBuffer());
  }

  it('sends to every --to and --cc, with each --header, --body and --html, and prints the queue id', async () => {
    const attachment = await file('statement.pdf', uniquePdf('send-options'));
    const run = await runCli([
      'send',
      ...['--server', server, '--from', 'ap@acme.example'],
      ...['--to', 'documents@ingest.test', '--to', 'archive@ingest.test', '--cc', 'copies@ingest.test'],
      ...['--subject', 'March statement'],
      ...['--header', 'X-Ticket: 4711', '--header', 'X-Tag: first', '--header', 'X-Tag: second'],
      ...['--body', 'The statement for March.', '--html', '<p>The statement for <b>March</b>.</p>'],
      ...['--attach', attachment],
    ]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const id = queueIdIn(run.stdout);
    expect(run.stdout.split('\n')[0]).toBe(`250 2.0.0 queued as ${id}`);

    const received = await record(id);
    expect(received.envelope).toEqual({
      mailFrom: 'ap@acme.example',
      rcptTo: ['documents@ingest.test', 'archive@ingest.test', 'copies@ingest.test'],
    });
    expect(received.workspaces.map((workspace) => [workspace.identifier, workspace.admitted])).toEqual([
      ['ws-open', true],
      ['ws-archive', true],
      ['ws-copies', true],
    ]);
    const mail = await simpleParser(await raw(id));
    expect(mail.subject).toBe('March statement');
    expect(mail.headers.get('x-ticket')).toBe('4711');
    expect(mail.headerLines.filter((line) => line.key === 'x-tag').map((line) => line.line)).toEqual([
      'X-Tag: first',
      'X-Tag: second',
    ]);
    expect(mail.text?.trim()).toBe('The statement for March.');
    expect(mail.html).toContain('<p>The statement for <b>March</b>.</p>');
    expect(mail.cc).toMatchObject({ text: 'copies@ingest.test' });
    expect(mail.attachments.map((part) => part.filename)).toEqual(['statement.pdf']);
  });

  it('--wait prints each attachment with the identifier of the document it became', async () => {
    const pdf = await file('wait.pdf', uniquePdf('send-wait'));
    // Bytes of no supported type: the gateway skips the part and says why.
    const data = await file('data.bin', Buffer.from([0, 159, 146, 150, 0, 1, 2, 3, 255, 254]));
    const run = await runCli(
      [
        'send',
        ...['--server', server, '--from', 'someone@example.org', '--to', 'documents@ingest.test'],
        ...['--attach', pdf, '--attach', data, '--wait', '20', '--http', harness.httpUrl],
      ],
      { env: { HTTP_TOKEN } },
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const id = queueIdIn(run.stdout);
    const [uploaded] = harness.mock.uploads.filter((upload) => upload.file?.fileName === 'wait.pdf');
    expect(uploaded?.file?.fileName).toBe('wait.pdf');
    const { attachments } = await record(id);
    const skipped = attachments.find((entry) => entry.fileName === 'data.bin');
    expect(skipped?.reason).toEqual(expect.any(String));
    expect(run.stdout.split('\n').slice(2)).toEqual([
      'state\tfile\tworkspace\tdocument or reason',
      `uploaded\twait.pdf\tws-open\t${uploaded?.documentIdentifier}`,
      `skipped\tdata.bin\t-\t${skipped?.reason}`,
      '',
    ]);
  });

  it('--wait finds the HTTP API and its token in --config', async () => {
    const config = await file(
      'gateway.yaml',
      `api:\n  mock: true\nhttp:\n  host: 127.0.0.1\n  port: ${new URL(harness.httpUrl).port}\n  token: ${HTTP_TOKEN}\n` +
        'workspaces:\n  - identifier: ws-open\n    ingestEmail: documents@ingest.test\n',
    );
    const pdf = await file('config.pdf', uniquePdf('send-config'));
    const run = await runCli(
      [
        'send',
        ...['--server', server, '--from', 'someone@example.org', '--to', 'documents@ingest.test'],
        ...['--attach', pdf, '--wait', '--config', config],
      ],
      { env: { HTTP_TOKEN: '' } },
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const id = queueIdIn(run.stdout);
    const [entry] = (await record(id)).attachments;
    expect(entry?.documentIdentifier).toEqual(expect.any(String));
    expect(run.stdout).toContain(`uploaded\tconfig.pdf\tws-open\t${entry?.documentIdentifier}\n`);
  });

  it('--wait without the token says to set HTTP_TOKEN, exit 1', async () => {
    const pdf = await file('token.pdf', uniquePdf('send-token'));
    const run = await runCli(
      [
        'send',
        ...['--server', server, '--from', 'someone@example.org', '--to', 'documents@ingest.test'],
        ...['--attach', pdf, '--wait', '20', '--http', harness.httpUrl],
      ],
      { env: { HTTP_TOKEN: '' } },
    );
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^250 2\.0\.0 queued as /);
    expect(run.stderr).toContain('answered 401: set HTTP_TOKEN');
  });

  it('prints a refusal as the reply and exits 1', async () => {
    const pdf = await file('refused.pdf', uniquePdf('send-refused'));
    const run = await runCli([
      'send',
      ...['--server', server, '--from', 'someone@example.org', '--to', 'nobody@ingest.test', '--attach', pdf],
    ]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^not accepted: 550 5\.1\.1 /);
  });

  it('names each refused recipient and exits 1 when the others accepted the mail', async () => {
    const pdf = await file('partly.pdf', uniquePdf('send-partly'));
    const run = await runCli([
      'send',
      ...['--server', server, '--from', 'someone@example.org', '--attach', pdf],
      ...['--to', 'documents@ingest.test', '--to', 'nobody@ingest.test'],
    ]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^250 2\.0\.0 queued as /);
    expect(run.stderr).toBe('recipient refused: nobody@ingest.test\n');
    expect((await record(queueIdIn(run.stdout))).envelope.rcptTo).toEqual(['documents@ingest.test']);
  });
});

describe('ingest-gateway send --tls', () => {
  let harness: Harness;
  let args: string[];

  beforeAll(async () => {
    harness = await startTlsHarness();
    const pdf = await file('tls.pdf', uniquePdf('send-tls'));
    args = ['send', '--server', `127.0.0.1:${harness.smtpPort}`, '--from', 'a@example.org'];
    args.push('--to', 'documents@ingest.test', '--attach', pdf);
  });
  afterAll(async () => {
    await harness?.close();
  });

  it('without --tls gets the 530 of a gateway that requires TLS, exit 1', async () => {
    const run = await runCli(args);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^not accepted: 530 5\.7\.0 /);
  });

  it('--tls refuses the self-signed certificate and names --tls-insecure, exit 1', async () => {
    const run = await runCli([...args, '--tls']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('(for a self-signed certificate in development: --tls-insecure)');
  });

  it('--tls-insecure sends over STARTTLS and the gateway queues the mail', async () => {
    const run = await runCli([...args, '--tls-insecure']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect((await harness.record(queueIdIn(run.stdout))).envelope.rcptTo).toEqual(['documents@ingest.test']);
  });
});
