import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { sha256 } from '../../harness/mail-fixtures.ts';
import { emlFixture, multipartMessage, sampleFile, uniquePdf } from '../../harness/messages.ts';
import { deliver, queuedId } from '../../harness/smtp-session.ts';
import type { MessageRecord } from '../../src/record/message-record.ts';

/** The gaps real-world mail showed in the MIME walk, end to end through SMTP to the mock API. */
describe('real-world mail end to end', () => {
  let harness: Harness;
  let redis: Redis;

  beforeAll(async () => {
    harness = await startHarness({ smtp: { maxPartSize: 1_000_000 } });
    redis = new Redis(harness.redis.url, { lazyConnect: true });
    await redis.connect();
  });
  afterAll(async () => {
    redis?.disconnect();
    await harness?.close();
  });

  /** Deliver to the open workspace and wait until every upload of the message has settled. */
  async function ingest(message: Buffer): Promise<MessageRecord> {
    const { data } = await deliver(harness.smtpPort, { to: ['documents@ingest.test'], message });
    const id = queuedId(data);
    const queued = (await harness.record(id)).attachments.filter((entry) => entry.workspace !== null);
    await Promise.all(queued.map((entry) => harness.settled(id, entry.entry)));
    return harness.record(id);
  }

  const uploadOf = (record: MessageRecord, fileName: string) => {
    const entry = record.attachments.find((candidate) => candidate.fileName === fileName);
    return harness.mock.uploads.find((upload) => upload.documentIdentifier === entry?.documentIdentifier);
  };

  it('uploads uuencoded parts decoded, byte for byte', async () => {
    const record = await ingest(emlFixture('uuencoded.eml'));
    expect(record.attachments.map((entry) => [entry.fileName, entry.state, entry.detectedType])).toEqual([
      ['invoice-uu.pdf', 'uploaded', 'application/pdf'],
      ['named-by-begin.pdf', 'uploaded', 'application/pdf'],
      ['scan.png', 'uploaded', 'image/png'],
    ]);
    expect(uploadOf(record, 'invoice-uu.pdf')?.file?.sha256).toBe(sha256(sampleFile('sample.pdf')));
    expect(uploadOf(record, 'scan.png')?.file?.sha256).toBe(sha256(sampleFile('image.png')));
  });

  it.each([
    ['a bounce that returns the invoice it could not deliver', 'bounce-with-invoice.eml', 'details.txt'],
    ['a read receipt with named report parts', 'read-receipt.eml', 'MDNPart2.txt'],
    [
      'pointers to content stored elsewhere (CPython msg_36)',
      'external-body.eml',
      'draft-ietf-mboned-mix-00.txt',
    ],
  ])('refuses %s with 550 5.6.0: nothing in it is a document', async (_case, file, named) => {
    const uploadsBefore = harness.mock.uploads.length;
    const { data } = await deliver(harness.smtpPort, {
      to: ['documents@ingest.test'],
      message: emlFixture(file),
    });
    expect(data?.code).toBe(550);
    expect(data?.text).toMatch(/^550 5\.6\.0 no supported attachment: found \d parts: /);
    expect(data?.text).toContain(named);
    expect(harness.mock.uploads.length).toBe(uploadsBefore);
  });

  it('skips empty parts wherever they stand and takes the rest', async () => {
    const record = await ingest(emlFixture('empty-parts.eml'));
    expect(
      record.attachments.map((entry) => [entry.fileName, entry.state, entry.reason, entry.size]),
    ).toEqual([
      ['blank-line.txt', 'uploaded', null, 2],
      ['invoice.pdf', 'uploaded', null, sampleFile('sample.pdf').length],
      ['first.txt', 'skipped', 'empty part', 0],
      ['empty.pdf', 'skipped', 'empty part', 0],
      ['last.txt', 'skipped', 'empty part', 0],
    ]);
  });

  it('sends names whose extension says the detected type and records the names as sent', async () => {
    const record = await ingest(emlFixture('mismatched-names.eml'));
    expect(
      record.attachments.map((entry) => [
        entry.originalFileName,
        entry.fileName,
        entry.state,
        entry.detectedType,
      ]),
    ).toEqual([
      ['test.rtf', 'test.png', 'uploaded', 'image/png'],
      ['Rechnung März\ufffd.pdf', 'Rechnung März\ufffd.pdf', 'uploaded', 'application/pdf'],
      ['Übersicht März.pdf', 'Übersicht März.pdf', 'uploaded', 'application/pdf'],
      ['Köln Übersicht.pdf', 'Köln Übersicht.pdf', 'uploaded', 'application/pdf'],
      ['export.bin', 'export.bin', 'skipped', null],
    ]);
    const png = uploadOf(record, 'test.png');
    expect([png?.file?.fileName, png?.fields.fileName?.[0], png?.file?.contentType]).toEqual([
      'test.png',
      'test.png',
      'image/png',
    ]);
    expect(record.attachments.at(-1)?.reason).toBe(
      'unsupported type application/octet-stream (declared; its bytes are text, which is taken only when declared text/plain or text/html or named .txt, .text, .htm or .html)',
    );
  });

  it('skips an oversized video beside a PDF without storing it, and refuses an oversized PDF', async () => {
    // 3 MB against maxPartSize 1 MB: an MP4 (ftyp box), then random bytes.
    const video = Buffer.concat([
      Buffer.from('\0\0\0\x18ftypmp42\0\0\0\0mp42isom', 'latin1'),
      randomBytes(3_000_000),
    ]);
    const pdf = uniquePdf('beside-video');
    const message = multipartMessage([
      ['holiday.mp4', 'video/mp4', video],
      ['invoice.pdf', 'application/pdf', pdf],
    ]);
    const { data } = await deliver(harness.smtpPort, { to: ['documents@ingest.test'], message });
    const id = queuedId(data);
    // Nothing of the video is kept: no part or blob key of it, only the raw copy of the message.
    expect(
      await redis.exists(`itest:{${id}}:blob:${sha256(video)}`, `itest:{${id}}:span:${sha256(video)}`),
    ).toBe(0);
    expect(await redis.keys(`itest:{${id}}:part:*`)).toEqual([]);
    await harness.settled(id, 0);
    const record = await harness.record(id);
    expect(record.attachments.map((entry) => [entry.fileName, entry.state, entry.reason])).toEqual([
      ['invoice.pdf', 'uploaded', null],
      ['holiday.mp4', 'skipped', 'unsupported type video/mp4 (declared video/mp4)'],
    ]);
    expect(record.attachments[1]?.size).toBe(video.length);

    const big = Buffer.concat([sampleFile('sample.pdf'), randomBytes(1_500_000)]);
    const refused = await deliver(harness.smtpPort, {
      to: ['documents@ingest.test'],
      message: multipartMessage([['big-scan.pdf', 'application/pdf', big]]),
    });
    expect(refused.data?.text).toBe(
      '552 5.3.4 attachment "big-scan.pdf" is larger than the 1 MB the parsing service accepts',
    );
  });
});
