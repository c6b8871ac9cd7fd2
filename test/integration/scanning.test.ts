import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ClamdOptions,
  EICAR,
  EICAR_SIGNATURE,
  startClamd,
  type TestClamd,
} from '../../harness/clamd.ts';
import { type Harness, type HarnessOptions, startHarness } from '../../harness/gateway-harness.ts';
import { getJson, readyzAnswers } from '../../harness/http-state.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { scrape } from '../../harness/metrics-scrape.ts';
import { GTUBE, startRspamd, type TestRspamd } from '../../harness/rspamd.ts';
import { deliver, queuedId } from '../../harness/smtp-session.ts';
import { uploadJobId, uploadQueueName } from '../../src/queue/upload-queue.ts';
import { createKeySpace } from '../../src/record/keys.ts';
import type { MessageRecord } from '../../src/record/message-record.ts';

/** A sample of the test's own, which clamd finds by its MD5 (an .hdb signature). */
const SAMPLE = Buffer.from('A sample the gateway test database knows by its MD5.\n'.repeat(40));
const clamdOptions: ClamdOptions = {
  // Small, so a message past it is cheap to send.
  streamMaxLength: '1M',
  files: [{ name: 'Gateway-Test.Sample', content: SAMPLE }],
};

const workspaces: HarnessOptions['workspaces'] = [
  { identifier: 'ws-refuse', ingestEmail: 'refuse@ingest.test', malware: 'refuse', spam: 'refuse' },
  { identifier: 'ws-tag', ingestEmail: 'tag@ingest.test', spam: 'tag' },
  { identifier: 'ws-off', ingestEmail: 'off@ingest.test', spam: 'off' },
  { identifier: 'ws-hold', ingestEmail: 'hold@ingest.test', malware: 'hold', spam: 'hold' },
];

/** A message with a PDF (a document the workspace takes) and what the test adds. */
function message(
  label: string,
  extra: { text?: string; attachments?: { filename: string; content: Buffer }[] } = {},
) {
  return composeMessage({
    subject: label,
    text: extra.text ?? 'Please find the invoice attached.',
    attachments: [
      { filename: `${label}.pdf`, content: uniquePdf(label), contentType: 'application/pdf' },
      ...(extra.attachments ?? []),
    ],
  });
}

/** Whether any upload job exists for the message's entries: a held message has none. */
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

async function send(harness: Harness, to: string, body: Buffer) {
  const { data } = await deliver(harness.smtpPort, { to: [to], message: body });
  return data;
}

describe('scanning with real clamd and rspamd', () => {
  let clamd: TestClamd;
  let rspamd: TestRspamd;
  let harness: Harness;
  let accepting: Harness;

  beforeAll(async () => {
    [clamd, rspamd] = await Promise.all([startClamd(clamdOptions), startRspamd()]);
    const scan = (unavailable: 'tempfail' | 'accept') => ({
      clamav: { socket: clamd.socket, timeout: 10_000 },
      rspamd: { url: rspamd.url, timeout: 10_000 },
      unavailable,
    });
    harness = await startHarness({ scan: scan('tempfail'), workspaces });
    accepting = await startHarness({ scan: scan('accept'), workspaces });
  }, 180_000);
  afterAll(async () => {
    await Promise.all([harness?.close(), accepting?.close()]);
    await Promise.all([clamd?.close(), rspamd?.close()]);
  });

  it('refuses EICAR with 550 5.7.1 naming the signature clamd found, and uploads nothing', async () => {
    const data = await send(
      harness,
      'refuse@ingest.test',
      await message('eicar', {
        attachments: [{ filename: 'eicar.com', content: Buffer.from(EICAR, 'latin1') }],
      }),
    );
    expect(data?.text).toBe(`550 5.7.1 malware found: ${EICAR_SIGNATURE}`);
    // Uploads of earlier tests may still land; none is of this message's PDF.
    expect(harness.mock.uploads.some((upload) => upload.file?.fileName === 'eicar.pdf')).toBe(false);
    const metrics = await scrape(harness.httpUrl);
    expect(
      metrics.value('ingest_gateway_scans_total{scanner="clamav",verdict="infected"}'),
    ).toBeGreaterThanOrEqual(1);
  });

  it("finds the test's own sample by its hash inside a base64 attachment", async () => {
    const data = await send(
      harness,
      'refuse@ingest.test',
      await message('sample', { attachments: [{ filename: 'sample.bin', content: SAMPLE }] }),
    );
    expect(data?.text).toBe('550 5.7.1 malware found: Gateway-Test.Sample.UNOFFICIAL');
  });

  it('accepts a clean PDF and records both verdicts', async () => {
    const data = await send(harness, 'refuse@ingest.test', await message('clean'));
    expect(data?.text).toMatch(/^250 2\.0\.0 queued as /);
    const record = await harness.record(queuedId(data));
    expect(record.scan).toEqual({
      malware: { verdict: 'clean', signature: null, reason: null },
      spam: { action: 'no action', score: expect.any(Number), policy: 'refuse', reason: null },
    });
    expect(await harness.settled(record.id, 0)).toBe('completed');
    // The console's message page shows both verdicts.
    const page = await (await fetch(`${harness.httpUrl}/messages/${record.id}`)).text();
    expect(page).toMatch(/<dd data-field="malware"><span class="verdict pass">clean<\/span>/);
    expect(page).toMatch(/<dd data-field="spam">no action, score [\d.]+ \(policy refuse\)/);
    const metrics = await scrape(harness.httpUrl);
    expect(
      metrics.value('ingest_gateway_scans_total{scanner="rspamd",verdict="no_action"}'),
    ).toBeGreaterThanOrEqual(1);
    expect(metrics.value('ingest_gateway_scan_seconds_count{scanner="clamav"}')).toBeGreaterThanOrEqual(1);
  });

  it('refuses GTUBE with 550 5.7.1 as spam (rspamd says reject)', async () => {
    const data = await send(
      harness,
      'refuse@ingest.test',
      await message('gtube', { text: `Hello\r\n${GTUBE}\r\n` }),
    );
    expect(data?.text).toMatch(/^550 5\.7\.1 message refused as spam/);
  });

  it('accepts GTUBE for a workspace that tags spam, and records the action', async () => {
    const data = await send(
      harness,
      'tag@ingest.test',
      await message('gtube-tag', { text: `Hello\r\n${GTUBE}\r\n` }),
    );
    expect(data?.text).toMatch(/^250 2\.0\.0 queued as /);
    const record = await harness.record(queuedId(data));
    expect(record.scan?.spam).toMatchObject({ action: 'reject', policy: 'tag', reason: null });
    expect(record.scan?.malware?.verdict).toBe('clean');
  });

  it('holds EICAR for a workspace with malware: hold: 250, state held, nothing uploaded', async () => {
    const data = await send(
      harness,
      'hold@ingest.test',
      await message('eicar-hold', {
        attachments: [{ filename: 'eicar.com', content: Buffer.from(EICAR, 'latin1') }],
      }),
    );
    expect(data?.text).toMatch(/^250 2\.0\.0 queued as /);
    const record = await harness.record(queuedId(data));
    expect(record.state).toBe('held');
    expect(record.hold).toEqual({ reason: 'malware', workspace: 'ws-hold' });
    expect(record.scan?.malware).toEqual({ verdict: 'infected', signature: EICAR_SIGNATURE, reason: null });
    const pdf = record.attachments.find((entry) => entry.fileName === 'eicar-hold.pdf');
    expect(pdf).toMatchObject({ state: 'held', workspace: 'ws-hold' });
    // The commit made no upload job: nothing of it can reach the parsing service.
    expect(await uploadJobs(harness, record)).toBe(0);
    expect(harness.mock.uploads.some((upload) => upload.file?.fileName === 'eicar-hold.pdf')).toBe(false);
    const page = await (await fetch(`${harness.httpUrl}/messages/${record.id}`)).text();
    expect(page).toContain(
      '<p data-field="hold"><span class="verdict fail">held</span> for ws-hold: malware;',
    );
    const listed = await getJson<{ messages: MessageRecord[] }>(`${harness.httpUrl}/v1/messages?state=held`);
    expect(listed.body?.messages.map((message) => message.id)).toContain(record.id);
  });

  it('holds GTUBE for a workspace with spam: hold, recording the action', async () => {
    const data = await send(
      harness,
      'hold@ingest.test',
      await message('gtube-hold', { text: `Hello\r\n${GTUBE}\r\n` }),
    );
    expect(data?.text).toMatch(/^250 2\.0\.0 queued as /);
    const record = await harness.record(queuedId(data));
    expect(record).toMatchObject({ state: 'held', hold: { reason: 'spam', workspace: 'ws-hold' } });
    expect(record.scan?.spam).toMatchObject({ action: 'reject', policy: 'hold' });
    expect(
      record.attachments.filter((entry) => entry.workspace !== null).map((entry) => entry.state),
    ).toEqual(['held']);
    expect(await uploadJobs(harness, record)).toBe(0);
  });

  it('takes a clean message for a holding workspace as usual', async () => {
    const data = await send(harness, 'hold@ingest.test', await message('clean-hold'));
    const record = await harness.record(queuedId(data));
    expect(record.state).toBeUndefined();
    expect(await harness.settled(record.id, 0)).toBe('completed');
  });

  it('does not ask rspamd for a workspace whose spam policy is off', async () => {
    const data = await send(
      harness,
      'off@ingest.test',
      await message('gtube-off', { text: `Hello\r\n${GTUBE}\r\n` }),
    );
    expect(data?.text).toMatch(/^250 2\.0\.0 queued as /);
    const record = await harness.record(queuedId(data));
    expect(record.scan).toEqual({ malware: { verdict: 'clean', signature: null, reason: null }, spam: null });
  });

  it('keeps workspaces with different scan policies in separate transactions (452 4.5.3)', async () => {
    const { rcpt } = await deliver(harness.smtpPort, {
      to: ['refuse@ingest.test', 'tag@ingest.test'],
      message: await message('two-policies'),
    });
    expect(rcpt.map((reply) => reply.code)).toEqual([250, 452]);
    expect(rcpt[1]?.text).toMatch(/^452 4\.5\.3/);
  });

  it("refuses a message longer than clamd's StreamMaxLength with 552 5.3.4, or takes it unscanned under accept", async () => {
    const big = await message('big', {
      attachments: [{ filename: 'big.pdf', content: uniquePdf('x'.repeat(1_500_000)) }],
    });
    const refused = await send(harness, 'refuse@ingest.test', big);
    expect(refused?.text).toBe('552 5.3.4 message is larger than the malware scanner reads');

    const taken = await send(accepting, 'refuse@ingest.test', big);
    expect(taken?.text).toMatch(/^250 2\.0\.0 queued as /);
    const record = await accepting.record(queuedId(taken));
    expect(record.scan?.malware).toMatchObject({ verdict: 'unscanned', signature: null });
    expect(record.scan?.malware?.reason).toMatch(/size limit exceeded/i);
  });

  it('with clamd stopped: 451 4.7.1 and not ready; under accept 250 recorded unscanned', async () => {
    await clamd.stop();
    try {
      const data = await send(harness, 'refuse@ingest.test', await message('no-clamd'));
      expect(data?.text).toBe('451 4.7.1 malware scan unavailable, please try again later');
      const ready = await readyzAnswers<{ scanners?: Record<string, string> }>(harness.httpUrl, 503);
      expect(ready.body?.scanners?.clamav).not.toBe('ok');
      expect(ready.body?.scanners?.rspamd).toBe('ok');

      const taken = await send(accepting, 'refuse@ingest.test', await message('no-clamd-accept'));
      expect(taken?.text).toMatch(/^250 2\.0\.0 queued as /);
      const record = await accepting.record(queuedId(taken));
      expect(record.scan?.malware).toMatchObject({ verdict: 'unscanned', signature: null });
      expect(record.scan?.spam?.action).toBe('no action');
      expect(await accepting.settled(record.id, 0)).toBe('completed');
    } finally {
      await clamd.start();
    }
    const ready = await readyzAnswers<{ scanners?: Record<string, string> }>(harness.httpUrl, 200);
    expect(ready.body?.scanners).toEqual({ clamav: 'ok', rspamd: 'ok' });
  });

  it('with rspamd stopped: 451 4.7.1 where spam is refused, 250 unscanned where it is tagged', async () => {
    await rspamd.stop();
    try {
      const data = await send(harness, 'refuse@ingest.test', await message('no-rspamd'));
      expect(data?.text).toBe('451 4.7.1 spam scan unavailable, please try again later');
      const tagged = await send(harness, 'tag@ingest.test', await message('no-rspamd-tag'));
      expect(tagged?.text).toMatch(/^250 2\.0\.0 queued as /);
      const record = await harness.record(queuedId(tagged));
      expect(record.scan?.spam).toMatchObject({ action: null, score: null, policy: 'tag' });
      expect(record.scan?.spam?.reason).toMatch(/rspamd/);
      const metrics = await scrape(harness.httpUrl);
      expect(
        metrics.value('ingest_gateway_scans_total{scanner="rspamd",verdict="unscanned"}'),
      ).toBeGreaterThanOrEqual(2);
    } finally {
      await rspamd.start();
    }
  });

  it('describes the scan in the OpenAPI document of the message record', async () => {
    const { body } = await getJson<{ components: { schemas: Record<string, unknown> } }>(
      `${harness.httpUrl}/v1/openapi.json`,
    );
    expect(JSON.stringify(body)).toContain('clamd');
  });
});
