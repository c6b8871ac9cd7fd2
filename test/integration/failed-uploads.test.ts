import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../harness/cli-process.ts';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { deliver, queuedId } from '../../harness/smtp-session.ts';
import { testConfigFile } from '../../harness/test-config.ts';
import { type FailedCommand, runFailedCommand } from '../../src/cli/failed/failed-command.ts';
import { openFailedUploads } from '../../src/cli/failed/open-failed-uploads.ts';
import { uploadQueueName } from '../../src/queue/upload-queue.ts';
import { createKeySpace } from '../../src/record/keys.ts';
import { createMessageLedger } from '../../src/record/message-ledger.ts';

const run = promisify(execFile);

/** Failed uploads stay visible and can be retried: `ingest-gateway failed list|retry`. */
describe('failed uploads', () => {
  let harness: Harness;
  let admin: ReturnType<typeof openFailedUploads>;

  beforeAll(async () => {
    harness = await startHarness({ upload: { attempts: 2 } });
    admin = openFailedUploads(harness.config, harness.redis.url, harness.logger);
  });
  afterAll(async () => {
    await admin?.close();
    await harness?.close();
  });

  async function failOne(label: string): Promise<string> {
    harness.mock.enqueueFault({
      status: 400,
      body: {
        type: 'validation_error',
        errors: [{ attr: 'file', code: 'invalid', detail: `refused ${label}` }],
      },
    });
    const message = await composeMessage({
      attachments: [{ filename: `${label}.pdf`, content: uniquePdf(label) }],
    });
    const id = queuedId((await deliver(harness.smtpPort, { to: ['documents@ingest.test'], message })).data);
    expect(await harness.settled(id, 0)).toBe('failed');
    return id;
  }

  async function command(failedCommand: FailedCommand): Promise<{ code: number; text: string }> {
    const out = new PassThrough();
    let text = '';
    out.on('data', (chunk: Buffer) => {
      text += chunk.toString();
    });
    const code = await runFailedCommand(failedCommand, admin.failed, out);
    return { code, text };
  }

  it('lists a failed upload with its reason, and retries it into an uploaded document', async () => {
    const id = await failOne('listed');
    const listed = await command({ action: 'list', json: false });
    expect(listed.code).toBe(0);
    expect(listed.text).toMatch(
      new RegExp(`^${id}-0\\tws-open\\tlisted\\.pdf\\t1\\t.+\\tyes\\t.*refused listed`, 'm'),
    );

    const retried = await command({ action: 'retry', jobIds: [`${id}-0`] });
    expect(retried).toEqual({ code: 0, text: `retried ${id}-0\n` });
    expect(await harness.settled(id, 0)).toBe('completed');
    const [entry] = (await harness.record(id)).attachments;
    expect(entry).toMatchObject({ state: 'uploaded', attempts: 1 });
    expect(harness.mock.uploads.some((upload) => upload.file?.fileName === 'listed.pdf')).toBe(true);
    expect((await command({ action: 'list', json: true })).text).not.toContain(`${id}-0`);
  });

  it('refuses to retry a job that is not a failed upload, with exit code 1', async () => {
    expect(await command({ action: 'retry', jobIds: ['nope-0'] })).toEqual({
      code: 1,
      text: 'not retried nope-0: not a failed upload\n',
    });
  });

  it('refuses to retry a failed job whose entry the service already answered for', async () => {
    // A job can fail after its settlement was written (it stalled out once the document was
    // recorded); retrying it could only upload the document twice.
    const id = await failOne('settled');
    const redis = new Redis(harness.redis.url);
    try {
      const ledger = createMessageLedger(redis, createKeySpace(harness.config.redis.prefix), 3600);
      await ledger.updateEntry(id, 0, { state: 'uploaded', documentIdentifier: 'doc-settled' });
    } finally {
      redis.disconnect();
    }
    const before = harness.mock.uploads.length;
    expect(await command({ action: 'retry', jobIds: [`${id}-0`] })).toEqual({
      code: 1,
      text: `not retried ${id}-0: already uploaded: nothing to retry\n`,
    });
    expect((await harness.record(id)).attachments[0]).toMatchObject({ state: 'uploaded' });
    expect(harness.mock.uploads.length).toBe(before);
    // Out of the failed set, so the tests after this one see only their own failures.
    const queue = new Queue(uploadQueueName, {
      connection: { host: '127.0.0.1', port: harness.redis.port },
      prefix: createKeySpace(harness.config.redis.prefix).queuePrefix,
    });
    try {
      await (await queue.getJob(`${id}-0`))?.remove();
    } finally {
      await queue.close();
    }
  });

  it('retries every failed upload with --all', async () => {
    const first = await failOne('all-a');
    const second = await failOne('all-b');
    const { code, text } = await command({ action: 'retry', jobIds: 'all' });
    expect(code).toBe(0);
    expect(text).toContain(`retried ${first}-0`);
    expect(text).toContain(`retried ${second}-0`);
    expect(await harness.settled(first, 0)).toBe('completed');
    expect(await harness.settled(second, 0)).toBe('completed');
  });

  it('is the real command line: ingest-gateway failed list --json', async () => {
    const id = await failOne('cli');
    const dir = await mkdtemp(join(tmpdir(), 'failed-cli-'));
    try {
      const configPath = join(dir, 'gateway.yaml');
      await writeFile(
        configPath,
        testConfigFile({
          redis: { url: harness.redis.url, prefix: harness.config.redis.prefix },
          workspaces: [{ identifier: 'ws-open', ingestEmail: 'documents@ingest.test' }],
        }).text,
      );
      const { stdout } = await run(process.execPath, [
        'src/cli.ts',
        'failed',
        'list',
        '--json',
        '--config',
        configPath,
      ]);
      const listed = JSON.parse(stdout) as Array<{ jobId: string; reason: string }>;
      expect(listed.find((upload) => upload.jobId === `${id}-0`)?.reason).toContain('refused cli');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it.each([
    { terminal: true, shown: true },
    { terminal: false, shown: false },
  ])(
    'failed retry --all shows its progress only on a terminal (terminal: $terminal)',
    async ({ terminal, shown }) => {
      const id = await failOne(`progress-${terminal}`);
      const dir = await mkdtemp(join(tmpdir(), 'failed-progress-'));
      try {
        const configPath = join(dir, 'gateway.yaml');
        await writeFile(
          configPath,
          `redis:\n  url: ${harness.redis.url}\n  prefix: ${harness.config.redis.prefix}\napi:\n  mock: true\n` +
            'workspaces:\n  - identifier: ws-open\n    ingestEmail: documents@ingest.test\n',
        );
        const cli = await runCli(['failed', 'retry', '--all', '--config', configPath], { terminal });
        expect(cli.code).toBe(0);
        // On a terminal stderr and stdout are the same pseudo-terminal, so both arrive in stdout.
        const output = cli.stdout + cli.stderr;
        expect(output).toContain(`retried ${id}-0`);
        const rewrite = '\r\u001b[2K';
        expect(output.includes(rewrite)).toBe(shown);
        const steps = output.split(rewrite).filter((text) => text.startsWith('retrying failed uploads: '));
        // Every failed upload left by the tests before this one is retried too: the last step is n/n.
        expect(/^retrying failed uploads: (\d+)\/\1$/.test(steps.at(-1) ?? '')).toBe(shown);
        expect(await harness.settled(id, 0)).toBe('completed');
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  );

  it('does not upload again on retry when the failed upload had reached the service', async () => {
    // The upload lands but its answer is lost, and the last attempt's lookup fails: the job
    // ends failed although the service has the document.
    harness.mock.enqueueFault({ drop: 'after' });
    harness.mock.enqueueFault({ status: 503, method: 'GET', path: '/v3/documents' });
    const message = await composeMessage({
      attachments: [{ filename: 'landed.pdf', content: uniquePdf('landed') }],
    });
    const id = queuedId((await deliver(harness.smtpPort, { to: ['documents@ingest.test'], message })).data);
    expect(await harness.settled(id, 0)).toBe('failed');
    expect(harness.mock.uploads.filter((upload) => upload.file?.fileName === 'landed.pdf')).toHaveLength(1);

    expect((await command({ action: 'retry', jobIds: [`${id}-0`] })).code).toBe(0);
    expect(await harness.settled(id, 0)).toBe('completed');
    expect(harness.mock.uploads.filter((upload) => upload.file?.fileName === 'landed.pdf')).toHaveLength(1);
    const [entry] = (await harness.record(id)).attachments;
    expect(entry?.state).toBe('uploaded');
    expect(entry?.documentIdentifier).toBe(
      harness.mock.uploads.find((upload) => upload.file?.fileName === 'landed.pdf')?.documentIdentifier,
    );
  });
});
