import { randomInt } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { getJson, until } from '../../harness/http-state.ts';
import { multipartMessage, type RawAttachment, uniquePdf } from '../../harness/messages.ts';
import { deliver, queuedId } from '../../harness/smtp-session.ts';
import { zipArchive } from '../../harness/zip-archive.ts';

/**
 * The bounds one message's containers share (unpack-containers.ts, MessageBudget): many ZIP
 * archives in one message reach Redis no further than the message could itself, the message
 * past maxAttachments is refused as soon as its documents say so, and other mail flows on.
 */
const MAX_MESSAGE_SIZE = 5 * 1024 * 1024;
const MAX_PART_SIZE = 1_000_000;
const WORDS = 'invoice total amount due'.split(' ');

/** Text of random words: it deflates about 10:1, well inside the 100:1 zip-bomb bound. */
function prose(bytes: number): Buffer {
  const words: string[] = [];
  let length = 0;
  while (length < bytes) {
    const word = WORDS[randomInt(WORDS.length)] ?? 'x';
    words.push(word);
    length += word.length + 1;
  }
  return Buffer.from(words.join(' ').padEnd(bytes).slice(0, bytes));
}

function withZips(zips: Buffer[], extra: RawAttachment[] = []): Buffer {
  return multipartMessage(
    [...zips.map((zip, i): RawAttachment => [`batch-${i + 1}.zip`, 'application/zip', zip]), ...extra],
    { to: 'unpack@ingest.test', subject: 'archives' },
  );
}

const pdfMessage = (label: string) => withZips([], [['invoice.pdf', 'application/pdf', uniquePdf(label)]]);

describe("one message's containers share one budget", () => {
  let harness: Harness;
  let redis: Redis;

  beforeAll(async () => {
    harness = await startHarness({
      workspaces: [
        { identifier: 'ws-unpack', ingestEmail: 'unpack@ingest.test', archives: 'unpack' as const },
        { identifier: 'ws-skip', ingestEmail: 'documents@ingest.test' },
      ],
      smtp: { maxMessageSize: MAX_MESSAGE_SIZE, maxPartSize: MAX_PART_SIZE, maxAttachments: 10 },
    });
    redis = new Redis(harness.redis.url);
  });
  afterAll(async () => {
    redis?.disconnect();
    await harness?.close();
  });

  async function usedMemoryPeak(): Promise<number> {
    const info = await redis.info('memory');
    return Number(/used_memory_peak:(\d+)/.exec(info)?.[1]);
  }

  it('takes files out of archives up to maxMessageSize in all, skips the rest with the reason, and Redis stays bounded', {
    timeout: 120_000,
  }, async () => {
    // Eight archives of four 900 KB text files: 28.8 MB once opened, from a message under 5 MiB.
    const zips = Array.from({ length: 8 }, (_, z) =>
      zipArchive(Array.from({ length: 4 }, (_, f) => [`notes-${z}-${f}.txt`, prose(900_000)] as const)),
    );
    const message = withZips(zips);
    expect(message.length).toBeLessThan(MAX_MESSAGE_SIZE);
    const peakBefore = await usedMemoryPeak();

    const { data } = await deliver(harness.smtpPort, { to: ['unpack@ingest.test'], message });
    const id = queuedId(data);
    const record = await harness.record(id);
    const queued = record.attachments.filter((entry) => entry.workspace !== null);
    await Promise.all(queued.map((entry) => harness.settled(id, entry.entry)));

    // The first archive's 3.6 MB fit the 5 MiB; the next would pass it, so it and the rest stay shut.
    expect(queued.map((entry) => entry.path)).toEqual(
      [0, 1, 2, 3].map((f) => `part 2 > batch-1.zip > notes-0-${f}.txt`),
    );
    const shut = record.attachments.filter((entry) => /^part \d+ > batch-\d\.zip$/.test(entry.path ?? ''));
    expect(shut.slice(1).map((entry) => entry.reason)).toEqual(
      Array.from(
        { length: 7 },
        () =>
          'a ZIP archive that cannot be opened: its files come to 3600000 bytes, more than the 1642880 this server unpacks from one archive (what is left of the bytes it takes out of one message)',
      ),
    );
    // Raw copy and archives (under 5 MiB each) and what was taken out (at most 5 MiB): 28.8 MB did not arrive.
    expect((await usedMemoryPeak()) - peakBefore).toBeLessThan(3 * MAX_MESSAGE_SIZE);
  });

  it('refuses a message whose archives hold more than maxAttachments documents, keeps nothing of it, and takes the next', {
    timeout: 120_000,
  }, async () => {
    // Of a refused message only the refusal log's entry stays (its stream is written at the refusal).
    const kept = async () => (await redis.keys('*')).filter((key) => !key.endsWith(':{refusals}:log')).sort();
    const keysBefore = await kept();
    const zips = Array.from({ length: 30 }, (_, z) =>
      zipArchive([[`invoice-${z}.pdf`, uniquePdf(`budget ${z}`)]]),
    );
    const { data } = await deliver(harness.smtpPort, { to: ['unpack@ingest.test'], message: withZips(zips) });
    expect(data?.text).toBe(
      '550 5.7.0 more than 10 supported attachments once its containers are opened, at most 10 are taken per message',
    );
    expect(await kept()).toEqual(keysBefore);
    // The refusal log is written beside the reply, not before it.
    const reply = await until(
      'the refusal in the log',
      async () =>
        (await getJson<{ refusals: { reply: string }[] }>(`${harness.httpUrl}/v1/refusals`)).body?.refusals[0]
          ?.reply,
      (text) => text !== undefined,
    );
    expect(reply).toMatch(/^550 5\.7\.0 more than 10 supported attachments/);

    const next = await deliver(harness.smtpPort, {
      to: ['documents@ingest.test'],
      message: pdfMessage('after the refused archives'),
    });
    expect(next.data?.text).toMatch(/^250 2\.0\.0 queued as /);
  });

  it('reads at most maxParts entries across all archives of a message', async () => {
    // Three archives of 40 entries each against maxParts 100: the third has 20 left to read.
    const zips = Array.from({ length: 3 }, (_, z) =>
      zipArchive(
        Array.from({ length: 40 }, (_, f) => [`data-${z}-${f}.bin`, Buffer.from([0, 1, 2, z, f])] as const),
      ),
    );
    const { data } = await deliver(harness.smtpPort, {
      to: ['unpack@ingest.test'],
      message: withZips(zips, [['invoice.pdf', 'application/pdf', uniquePdf('beside 120 entries')]]),
    });
    const record = await harness.record(queuedId(data));
    const reasons = record.attachments
      .filter((entry) => /^part \d+ > batch-\d\.zip$/.test(entry.path ?? ''))
      .map((entry) => entry.reason);
    expect(reasons).toEqual([
      expect.stringMatching(/^a ZIP archive, opened: its 40 files/),
      expect.stringMatching(/^a ZIP archive, opened: its 40 files/),
      'a ZIP archive that cannot be opened: it holds 40 entries, more than the 20 this server reads',
    ]);
  });

  it('stores no ZIP archive while DATA streams when no addressed workspace unpacks archives', async () => {
    const zip = zipArchive([
      ['scan.bin', Buffer.from(Array.from({ length: 900_000 }, () => randomInt(256)))],
    ]);
    const { data } = await deliver(harness.smtpPort, {
      to: ['documents@ingest.test'],
      message: withZips([zip], [['invoice.pdf', 'application/pdf', uniquePdf('beside a shut archive')]]),
    });
    const record = await harness.record(queuedId(data));
    expect(record.attachments.find((entry) => entry.path === 'part 2 > batch-1.zip')?.reason).toBe(
      'a ZIP archive, not opened: no workspace it is addressed to sets archives: unpack',
    );
  });
});
