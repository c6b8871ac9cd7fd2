import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, type HarnessOptions, startHarness } from '../../harness/gateway-harness.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { deliver, queuedId } from '../../harness/smtp-session.ts';
import { type Gateway, startGateway } from '../../src/gateway.ts';
import type { MessageRecord } from '../../src/record/message-record.ts';
import { openReplayIntake } from '../../src/roles/replay-intake.ts';

const workspaces: HarnessOptions['workspaces'] = [
  {
    identifier: 'ws-hold',
    ingestEmail: 'hold@ingest.test',
    whitelistIngestAddresses: ['*@partner.example'],
    unlistedSenders: 'hold',
  },
  {
    identifier: 'ws-refuse',
    ingestEmail: 'refuse@ingest.test',
    whitelistIngestAddresses: ['*@partner.example'],
  },
  // Held here, but unknown to the parsing service: its allow-list cannot be changed.
  {
    identifier: 'ws-gone',
    ingestEmail: 'gone@ingest.test',
    whitelistIngestAddresses: ['*@partner.example'],
    unlistedSenders: 'hold',
  },
];

function message(label: string, from: string) {
  return composeMessage({
    from,
    subject: label,
    text: 'Please find the invoice attached.',
    attachments: [{ filename: `${label}.pdf`, content: uniquePdf(label), contentType: 'application/pdf' }],
  });
}

interface ReleaseAnswer {
  queued?: number;
  allowed?: { workspace: string; rule: string; service: string }[];
  record?: MessageRecord;
  error?: string;
}

describe('release with allowSender', () => {
  let harness: Harness;
  /** A second instance on the same Redis and configuration, as a second pod would be. */
  let second: Gateway;

  beforeAll(async () => {
    harness = await startHarness({
      workspaces,
      mockWorkspaces: [
        { identifier: 'ws-hold', whitelistIngestAddresses: ['*@partner.example', 'ap@supplier.example'] },
        { identifier: 'ws-refuse', whitelistIngestAddresses: ['*@partner.example'] },
      ],
    });
    second = await startSecond();
  }, 60_000);
  afterAll(async () => {
    await second?.close();
    await harness?.close();
  });

  function startSecond(): Promise<Gateway> {
    return startGateway({
      config: harness.config,
      role: 'all',
      logger: harness.logger,
      redisUrl: harness.redis.url,
      apiBaseUrl: harness.mockUrl,
      apiKey: harness.apiKey,
      random: () => 0,
    });
  }

  async function send(port: number, to: string, body: Buffer) {
    const { data } = await deliver(port, { to: [to], message: body });
    return data;
  }

  async function held(label: string, from: string, to = 'hold@ingest.test'): Promise<MessageRecord> {
    const data = await send(harness.smtpPort, to, await message(label, from));
    const record = await harness.record(queuedId(data));
    expect(record.state).toBe('held');
    return record;
  }

  async function release(id: string, body: unknown): Promise<{ status: number; body: ReleaseAnswer }> {
    const response = await fetch(`${harness.httpUrl}/v1/messages/${id}/release`, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    });
    return { status: response.status, body: (await response.json()) as ReleaseAnswer };
  }

  const serviceList = (identifier: string) =>
    harness.mock.workspaces.get(identifier)?.whitelistIngestAddresses;
  const patches = () =>
    harness.mock.workspaces.requests.filter(
      (request) => request.method === 'PATCH' && request.status === 200,
    );

  it('adds the address to the service list keeping every rule, releases, and a second instance admits the sender', async () => {
    const record = await held('allow-address', 'Ann <Ann@Acme.example>');
    const before = patches().length;
    const answer = await release(record.id, { allowSender: 'address' });
    expect(answer.status).toBe(200);
    expect(answer.body.allowed).toEqual([
      { workspace: 'ws-hold', rule: 'Ann@acme.example', service: 'added' },
    ]);
    expect(answer.body.queued).toBe(1);
    expect(answer.body.record?.state).toBe('released');
    expect(patches().slice(before)).toEqual([
      expect.objectContaining({
        identifier: 'ws-hold',
        body: { whitelistIngestAddresses: ['*@partner.example', 'ap@supplier.example', 'Ann@acme.example'] },
      }),
    ]);
    expect(await harness.settled(record.id, 0)).toBe('completed');

    // The other instance never saw the release: it reads the allowed sender from Redis.
    const data = await send(
      second.smtpPort ?? 0,
      'hold@ingest.test',
      await message('after-allow', 'ann@acme.example'),
    );
    const admitted = await harness.record(queuedId(data));
    expect(admitted.state).toBeUndefined();
    expect(admitted.workspaces).toEqual([expect.objectContaining({ identifier: 'ws-hold', admitted: true })]);
    expect(await harness.settled(admitted.id, 0)).toBe('completed');
    // Only that address: another of its domain is still held.
    expect((await held('same-domain', 'bo@acme.example')).hold?.reason).toBe('sender_not_listed');
  });

  it('keeps both of two allow additions made at once, and the rules that were there', async () => {
    const [one, two] = [
      await held('concurrent-1', 'x@one.example'),
      await held('concurrent-2', 'y@two.example'),
    ];
    const answers = await Promise.all([
      release(one.id, { allowSender: 'domain' }),
      release(two.id, { allowSender: 'domain' }),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    const list = serviceList('ws-hold') ?? [];
    expect(list).toEqual(
      expect.arrayContaining(['*@partner.example', 'ap@supplier.example', '*@one.example', '*@two.example']),
    );
    expect(new Set(list).size).toBe(list.length);
  });

  it('admits a sender allowed by domain after a restart of the instance, with no file changed', async () => {
    const record = await held('restart-allow', 'zed@restart.example');
    expect((await release(record.id, { allowSender: 'domain' })).status).toBe(200);
    await second.close();
    second = await startSecond();
    const data = await send(
      second.smtpPort ?? 0,
      'hold@ingest.test',
      await message('after-restart', 'other@restart.example'),
    );
    const admitted = await harness.record(queuedId(data));
    expect(admitted.state).toBeUndefined();
    expect(await harness.settled(admitted.id, 0)).toBe('completed');
    // The configuration the instance runs on is the one it started with.
    expect(harness.config.workspaces[0]?.whitelistIngestAddresses).toEqual(['*@partner.example']);
  });

  it('the replay command admits a sender allowed at a release too', async () => {
    const record = await held('replay-allow', 'gus@replayed.example');
    expect((await release(record.id, { allowSender: 'address' })).status).toBe(200);
    const replay = await openReplayIntake(harness.config, harness.redis.url, harness.logger);
    try {
      const routed = replay.routes.route('hold@ingest.test');
      expect(routed?.config.whitelistIngestAddresses).toContain('gus@replayed.example');
      expect(
        routed?.admits({ local: 'gus', domain: 'replayed.example', address: 'gus@replayed.example' }),
      ).toBe(true);
    } finally {
      await replay.close();
    }
  });

  it('allows the sender for the workspace the message was held for only', async () => {
    const record = await held('per-workspace', 'fay@only-hold.example');
    expect((await release(record.id, { allowSender: 'domain' })).status).toBe(200);
    const refused = await send(
      harness.smtpPort,
      'refuse@ingest.test',
      await message('other-workspace', 'fay@only-hold.example'),
    );
    expect(refused?.text).toBe('550 5.7.1 sender fay@only-hold.example is not admitted for this address');
    expect(serviceList('ws-refuse')).toEqual(['*@partner.example']);
  });

  it('answers 502 and keeps the message held when the service does not know the workspace', async () => {
    const record = await held('gone-allow', 'dee@gone.example', 'gone@ingest.test');
    const answer = await release(record.id, { allowSender: 'address' });
    expect(answer.status).toBe(502);
    expect(answer.body.error).toMatch(/the allow-list was not changed: GET .*\/v3\/workspaces\/ws-gone: 404/);
    expect((await harness.record(record.id)).state).toBe('held');
    const refused = await send(
      harness.smtpPort,
      'gone@ingest.test',
      await message('gone-again', 'dee@gone.example'),
    );
    expect((await harness.record(queuedId(refused))).state).toBe('held');
  });

  it('refuses an allowSender it does not know with 400, and leaves the message held', async () => {
    const record = await held('bad-scope', 'eve@bad.example');
    expect((await release(record.id, { allowSender: 'everyone' })).status).toBe(400);
    expect((await release(record.id, { allowSender: 'domain', also: 1 })).status).toBe(400);
    expect((await harness.record(record.id)).state).toBe('held');
  });
});
