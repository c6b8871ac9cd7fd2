import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, type HarnessOptions, startHarness } from '../../harness/gateway-harness.ts';
import { getJson } from '../../harness/http-state.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { deliver, queuedId } from '../../harness/smtp-session.ts';
import { uploadJobId, uploadQueueName } from '../../src/queue/upload-queue.ts';
import { createKeySpace } from '../../src/record/keys.ts';
import type { MessageRecord } from '../../src/record/message-record.ts';

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
];

/** A message with one PDF named after the label, from the given sender. */
function message(label: string, from = 'Ann <ann@acme.example>') {
  return composeMessage({
    from,
    subject: label,
    text: 'Please find the invoice attached.',
    attachments: [{ filename: `${label}.pdf`, content: uniquePdf(label), contentType: 'application/pdf' }],
  });
}

/** How many upload jobs exist for the message's entries: a held message has none. */
async function uploadJobs(harness: Harness, record: MessageRecord): Promise<number> {
  const queue = new Queue(uploadQueueName, {
    connection: { host: '127.0.0.1', port: harness.redis.port },
    prefix: createKeySpace(harness.config.redis.prefix).queuePrefix,
  });
  try {
    const jobs = await Promise.all(
      record.attachments.map((entry) => queue.getJob(uploadJobId(record.id, entry.entry))),
    );
    return jobs.filter((job) => job !== undefined).length;
  } finally {
    await queue.close();
  }
}

describe('held mail', () => {
  let harness: Harness;

  beforeAll(async () => {
    // A held message lives retention.held, a released one retention.messages from its release.
    harness = await startHarness({ workspaces, retention: { held: 3600, messages: 7200 } });
  }, 60_000);
  afterAll(async () => {
    await harness?.close();
  });

  async function send(to: string, body: Buffer) {
    const { data } = await deliver(harness.smtpPort, { to: [to], message: body });
    return data;
  }

  it('holds mail from an unlisted sender under unlistedSenders: hold: 250, held, nothing uploaded', async () => {
    const data = await send('hold@ingest.test', await message('unlisted'));
    expect(data?.text).toMatch(/^250 2\.0\.0 queued as /);
    const record = await harness.record(queuedId(data));
    expect(record.state).toBe('held');
    expect(record.hold).toEqual({ reason: 'sender_not_listed', workspace: 'ws-hold' });
    expect(record.attachments).toEqual([
      expect.objectContaining({ fileName: 'unlisted.pdf', workspace: 'ws-hold', state: 'held' }),
    ]);
    expect(await uploadJobs(harness, record)).toBe(0);
    expect(harness.mock.uploads.some((upload) => upload.file?.fileName === 'unlisted.pdf')).toBe(false);
    const listed = await getJson<{ messages: MessageRecord[] }>(`${harness.httpUrl}/v1/messages?state=held`);
    expect(listed.body?.messages.map((listedRecord) => listedRecord.id)).toContain(record.id);
  });

  async function held(label: string): Promise<MessageRecord> {
    const data = await send('hold@ingest.test', await message(label));
    const record = await harness.record(queuedId(data));
    expect(record.state).toBe('held');
    return record;
  }

  async function post(id: string, action: string, body?: string) {
    const response = await fetch(`${harness.httpUrl}/v1/messages/${id}/${action}`, {
      method: 'POST',
      ...(body === undefined ? {} : { body, headers: { 'content-type': 'application/json' } }),
    });
    return {
      status: response.status,
      body: (await response.json()) as { queued?: number; record?: MessageRecord; error?: string },
    };
  }

  it('keeps held mail retention.held, and a released message retention.messages from the release', async () => {
    const record = await held('expiring');
    const keys = createKeySpace(harness.config.redis.prefix).message(record.id);
    const reader = new Redis(harness.redis.url);
    try {
      const ttls = async () => Promise.all([reader.ttl(keys.record), reader.ttl(keys.raw)]);
      for (const ttl of await ttls()) expect(ttl).toBeGreaterThan(0);
      for (const ttl of await ttls()) expect(ttl).toBeLessThanOrEqual(3600);
      expect((await post(record.id, 'release')).status).toBe(200);
      for (const ttl of await ttls()) expect(ttl).toBeGreaterThan(3600);
      for (const ttl of await ttls()) expect(ttl).toBeLessThanOrEqual(7200);
    } finally {
      reader.disconnect();
    }
    await harness.settled(record.id, 0);
  });

  it('release uploads the held documents once, and a second release uploads nothing', async () => {
    const record = await held('released');
    const first = await post(record.id, 'release');
    expect(first.status).toBe(200);
    expect(first.body.queued).toBe(1);
    expect(first.body.record?.state).toBe('released');
    expect(await harness.settled(record.id, 0)).toBe('completed');
    const uploads = () => harness.mock.uploads.filter((upload) => upload.file?.fileName === 'released.pdf');
    expect(uploads()).toHaveLength(1);
    const after = await harness.record(record.id);
    expect(after.state).toBe('released');
    expect(after.hold).toEqual({ reason: 'sender_not_listed', workspace: 'ws-hold' });
    expect(after.attachments[0]?.state).toBe('uploaded');
    const second = await post(record.id, 'release');
    expect(second.status).toBe(200);
    expect(second.body.queued).toBe(0);
    expect(await uploadJobs(harness, after)).toBe(1);
    expect(uploads()).toHaveLength(1);
    // Released, it is held no more: a discard is refused.
    expect((await post(record.id, 'discard')).status).toBe(409);
  });

  it('discard deletes the stored bytes and marks the record discarded', async () => {
    const record = await held('discarded');
    expect((await fetch(`${harness.httpUrl}/v1/messages/${record.id}/attachments/0`)).status).toBe(200);
    const answer = await post(record.id, 'discard');
    expect(answer.status).toBe(200);
    expect(answer.body.record?.state).toBe('discarded');
    expect(answer.body.record?.attachments[0]?.state).toBe('discarded');
    expect((await fetch(`${harness.httpUrl}/v1/messages/${record.id}/attachments/0`)).status).toBe(410);
    expect((await fetch(`${harness.httpUrl}/v1/messages/${record.id}/raw`)).status).toBe(404);
    expect((await post(record.id, 'discard')).status).toBe(200);
    expect((await post(record.id, 'release')).status).toBe(409);
    expect(await uploadJobs(harness, record)).toBe(0);
    const listed = await getJson<{ messages: MessageRecord[] }>(`${harness.httpUrl}/v1/messages?state=held`);
    expect(listed.body?.messages.map((listedRecord) => listedRecord.id)).not.toContain(record.id);
  });

  it('answers 404 for no such message, 409 for one not held, 400 for an unknown option, 405 for GET', async () => {
    expect((await post('nosuchmessage', 'release')).status).toBe(404);
    const data = await send('hold@ingest.test', await message('not-held', 'Bo <bo@partner.example>'));
    const id = queuedId(data);
    expect((await post(id, 'release')).status).toBe(409);
    expect((await post(id, 'discard')).status).toBe(409);
    const record = await held('allow-sender');
    const answer = await post(record.id, 'release', JSON.stringify({ allowSender: 'everyone' }));
    expect(answer.status).toBe(400);
    expect((await post(record.id, 'discard', JSON.stringify({ allowSender: 'address' }))).status).toBe(400);
    expect((await harness.record(record.id)).state).toBe('held');
    const get = await fetch(`${harness.httpUrl}/v1/messages/${record.id}/release`);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
  });

  it("shows the hold on the console's message page, whose Release and Discard buttons need the session's CSRF token", async () => {
    const [toRelease, toDiscard] = [await held('console-release'), await held('console-discard')];
    const page = await fetch(`${harness.httpUrl}/messages/${toRelease.id}`);
    const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const text = await page.text();
    expect(text).toContain(
      '<p data-field="hold"><span class="verdict fail">held</span> for ws-hold: sender_not_listed;',
    );
    expect(text).toContain(`action="/messages/${toRelease.id}/release"`);
    expect(text).toContain(`action="/messages/${toRelease.id}/discard"`);
    const csrf = /name="csrf" value="([^"]+)"/.exec(text)?.[1] ?? '';
    const submit = (id: string, action: string, token: string) =>
      fetch(`${harness.httpUrl}/messages/${id}/${action}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
        body: `csrf=${encodeURIComponent(token)}`,
        redirect: 'manual',
      });
    expect((await submit(toRelease.id, 'release', 'forged')).status).toBe(403);
    expect((await harness.record(toRelease.id)).state).toBe('held');
    const released = await submit(toRelease.id, 'release', csrf);
    expect(released.status).toBe(303);
    expect(released.headers.get('location')).toBe(`/messages/${toRelease.id}`);
    expect((await harness.record(toRelease.id)).state).toBe('released');
    expect(await harness.settled(toRelease.id, 0)).toBe('completed');
    expect((await submit(toDiscard.id, 'discard', csrf)).status).toBe(303);
    expect((await harness.record(toDiscard.id)).state).toBe('discarded');
    const after = await (
      await fetch(`${harness.httpUrl}/messages/${toDiscard.id}`, { headers: { cookie } })
    ).text();
    expect(after).toContain('Was held for ws-hold: sender_not_listed; discarded.');
    expect(after).not.toContain(`action="/messages/${toDiscard.id}/release"`);
  });

  it('still refuses an unlisted sender with 550 5.7.1 under the default refuse', async () => {
    const data = await send('refuse@ingest.test', await message('refused'));
    expect(data?.text).toBe('550 5.7.1 sender ann@acme.example is not admitted for this address');
  });

  it('takes a listed sender as usual under unlistedSenders: hold', async () => {
    const data = await send('hold@ingest.test', await message('listed', 'Bo <bo@partner.example>'));
    const record = await harness.record(queuedId(data));
    expect(record.state).toBeUndefined();
    expect(await harness.settled(record.id, 0)).toBe('completed');
  });
});
