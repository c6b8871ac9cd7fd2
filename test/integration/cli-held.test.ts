import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../harness/cli-process.ts';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { deliver, queuedId } from '../../harness/smtp-session.ts';
import { testConfigFile } from '../../harness/test-config.ts';
import type { MessageRecord } from '../../src/record/message-record.ts';

/** `ingest-gateway held …` run as a user runs it, against a running gateway's HTTP API. */
describe('ingest-gateway held', () => {
  let harness: Harness;
  let dir: string;

  beforeAll(async () => {
    harness = await startHarness({
      workspaces: [
        {
          identifier: 'ws-hold',
          ingestEmail: 'hold@ingest.test',
          whitelistIngestAddresses: ['*@partner.example'],
          unlistedSenders: 'hold',
        },
      ],
      mockWorkspaces: [{ identifier: 'ws-hold', whitelistIngestAddresses: ['*@partner.example'] }],
    });
    dir = await mkdtemp(join(tmpdir(), 'cli-held-'));
  }, 60_000);
  afterAll(async () => {
    await harness?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function held(label: string, from: string): Promise<MessageRecord> {
    const body = await composeMessage({
      from,
      subject: `Invoice ${label}`,
      text: 'Attached.',
      attachments: [{ filename: `${label}.pdf`, content: uniquePdf(label), contentType: 'application/pdf' }],
    });
    const { data } = await deliver(harness.smtpPort, { to: ['hold@ingest.test'], message: body });
    const record = await harness.record(queuedId(data));
    expect(record.state).toBe('held');
    return record;
  }

  const http = () => ['--http', harness.httpUrl];

  it('lists held mail as a table and as JSON', async () => {
    const record = await held('listed', 'ann@list.example');
    const table = await runCli(['held', 'list', ...http()]);
    expect(table.code).toBe(0);
    const [header, ...rows] = table.stdout.trim().split('\n');
    expect(header).toBe('id\treceived\tworkspace\treason\tfrom\tdocuments\tsubject');
    expect(rows).toContain(
      [
        record.id,
        record.receivedAt,
        'ws-hold',
        'sender_not_listed',
        'ann@list.example',
        '1',
        'Invoice listed',
      ].join('\t'),
    );
    const json = await runCli(['held', 'list', '--json', ...http()]);
    expect(json.code).toBe(0);
    const records = JSON.parse(json.stdout) as MessageRecord[];
    expect(records.find((listed) => listed.id === record.id)).toMatchObject({
      state: 'held',
      hold: { reason: 'sender_not_listed', workspace: 'ws-hold' },
    });
  });

  it('release --allow-domain adds *@domain on the service, releases, and the domain is admitted from then on', async () => {
    const record = await held('allow-domain', 'bo@newsupplier.example');
    const run = await runCli(['held', 'release', record.id, '--allow-domain', ...http()]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      `allowed *@newsupplier.example for ws-hold (parsing service: added)\nreleased ${record.id}: 1 upload(s) queued\n`,
    );
    expect(harness.mock.workspaces.get('ws-hold')?.whitelistIngestAddresses).toEqual([
      '*@partner.example',
      '*@newsupplier.example',
    ]);
    expect(await harness.settled(record.id, 0)).toBe('completed');
    const body = await composeMessage({
      from: 'cy@newsupplier.example',
      subject: 'next',
      text: 'Attached.',
      attachments: [{ filename: 'next.pdf', content: uniquePdf('next'), contentType: 'application/pdf' }],
    });
    const { data } = await deliver(harness.smtpPort, { to: ['hold@ingest.test'], message: body });
    expect((await harness.record(queuedId(data))).state).toBeUndefined();
    const list = await runCli(['held', 'list', ...http()]);
    expect(list.stdout).not.toContain(record.id);
  });

  it('release without an option only releases; --config finds the API from the http section', async () => {
    const record = await held('plain', 'dee@plain.example');
    const configPath = join(dir, 'gateway.yaml');
    await writeFile(configPath, testConfigFile({ http: { publicUrl: harness.httpUrl } }).text);
    const run = await runCli(['held', 'release', record.id, '--config', configPath]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`released ${record.id}: 1 upload(s) queued\n`);
    expect(harness.mock.workspaces.get('ws-hold')?.whitelistIngestAddresses).not.toContain('*@plain.example');
  });

  it('discard deletes it; a second release or an unknown id exits 1 with the reason', async () => {
    const record = await held('discarded', 'eve@discard.example');
    const run = await runCli(['held', 'discard', record.id, ...http()]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`discarded ${record.id}\n`);
    expect((await harness.record(record.id)).state).toBe('discarded');
    const again = await runCli(['held', 'release', record.id, ...http()]);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(`release ${record.id}: 409: message ${record.id} was discarded\n`);
    const unknown = await runCli(['held', 'discard', 'nosuchmessage', ...http()]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('discard nosuchmessage: 404: no message nosuchmessage\n');
  });

  it('exits 1 saying so when the API does not answer', async () => {
    const run = await runCli(['held', 'list', '--http', 'http://127.0.0.1:9']);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^the gateway's HTTP API at http:\/\/127\.0\.0\.1:9 did not answer: /);
  });
});
