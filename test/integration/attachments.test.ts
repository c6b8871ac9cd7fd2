import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { composeMessage, emlFixture, sampleFile, uniquePdf } from '../../harness/messages.ts';
import { deliver, queuedId } from '../../harness/smtp-session.ts';
import type { MessageRecord } from '../../src/record/message-record.ts';

/** The start of a Windows executable (MZ header, PE stub): what a disguised attachment really is. */
const windowsExecutable = Buffer.from(
  'TVqQAAMAAAAEAAAA//8AALgAAAAAAAAAQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAgAAAAA4fug4AtAnNIbgBTM0h' +
    'VGhpcyBwcm9ncmFtIGNhbm5vdCBiZSBydW4gaW4gRE9TIG1vZGUuDQ0KJAAAAAAAAAA=',
  'base64',
);

/** What the gateway takes out of real messages, end to end through SMTP to the mock API. */
describe('attachments end to end', () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startHarness({
      smtp: { maxAttachments: 20 },
      workspaces: [
        { identifier: 'ws-open', ingestEmail: 'documents@ingest.test' },
        {
          identifier: 'ws-acme',
          ingestEmail: 'invoices@ingest.test',
          whitelistIngestAddresses: ['*@acme.example', 'ap@partner.example'],
        },
        {
          identifier: 'ws-ledger',
          ingestEmail: 'ledger@ingest.test',
          whitelistIngestAddresses: ['ap@partner.example', '*@acme.example'],
        },
      ],
    });
  });
  afterAll(async () => harness?.close());

  /** Deliver to the open workspace and wait until every upload of the message has settled. */
  async function ingest(message: Buffer, to = ['documents@ingest.test']): Promise<MessageRecord> {
    const { data } = await deliver(harness.smtpPort, { to, message });
    const id = queuedId(data);
    const queued = (await harness.record(id)).attachments.filter((entry) => entry.workspace !== null);
    await Promise.all(queued.map((entry) => harness.settled(id, entry.entry)));
    return harness.record(id);
  }

  const uploadsOf = (record: MessageRecord) =>
    record.attachments
      .filter((entry) => entry.state === 'uploaded')
      .map((entry) =>
        harness.mock.uploads.find((upload) => upload.documentIdentifier === entry.documentIdentifier),
      );

  it('detects each supported format from its bytes, a PDF declared octet-stream included', async () => {
    const record = await ingest(emlFixture('every-format.eml'));
    const types = Object.fromEntries(record.attachments.map((entry) => [entry.fileName, entry.detectedType]));
    expect(types).toEqual({
      'invoice.pdf': 'application/pdf',
      'scan.pdf': 'application/pdf',
      'letter.doc': 'application/msword',
      'letter.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      'notes.txt': 'text/plain',
      'terms.rtf': 'application/rtf',
      'page.html': 'text/html',
      'photo.png': 'image/png',
      'photo.jpg': 'image/jpeg',
      'photo.tiff': 'image/tiff',
      'letter.odt': 'application/vnd.oasis.opendocument.text',
      'ledger.xls': 'application/vnd.ms-excel',
      'ledger.xlsx': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    });
    expect(record.attachments.every((entry) => entry.state === 'uploaded')).toBe(true);
    const scan = uploadsOf(record).find((upload) => upload?.file?.fileName === 'scan.pdf');
    expect(scan?.file?.contentType).toBe('application/pdf');
  });

  it('skips unsupported and empty parts, recording why, and uploads the rest', async () => {
    const record = await ingest(
      await composeMessage({
        attachments: [
          { filename: 'real.pdf', content: uniquePdf('skips') },
          {
            filename: 'invite.ics',
            content: Buffer.from('BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n'),
            contentType: 'text/calendar',
          },
          { filename: 'archive.zip', content: sampleFile('archive.zip'), contentType: 'application/zip' },
          { filename: 'empty.pdf', content: Buffer.alloc(0), contentType: 'application/pdf' },
          { filename: 'fake.pdf', content: windowsExecutable, contentType: 'application/pdf' },
        ],
      }),
    );
    const byName = Object.fromEntries(record.attachments.map((entry) => [entry.fileName, entry]));
    expect(byName['real.pdf']?.state).toBe('uploaded');
    expect(byName['empty.pdf']).toMatchObject({ state: 'skipped', reason: 'empty part', workspace: null });
    for (const name of ['invite.ics', 'fake.pdf']) {
      expect(byName[name]).toMatchObject({ state: 'skipped', workspace: null });
      expect(byName[name]?.reason).toMatch(/^unsupported type/);
    }
    // No workspace here sets archives: unpack, so the archive stays shut.
    expect(byName['archive.zip']).toMatchObject({
      state: 'skipped',
      workspace: null,
      reason: 'a ZIP archive, not opened: no workspace it is addressed to sets archives: unpack',
      path: 'part 4 > archive.zip',
    });
    expect(uploadsOf(record).map((upload) => upload?.file?.fileName)).toEqual(['real.pdf']);
  });

  it('takes the PDFs inside forwarded messages, a forward within a forward included', async () => {
    const record = await ingest(emlFixture('forwarded.eml'));
    const uploaded = record.attachments.filter((entry) => entry.state === 'uploaded');
    expect(uploaded.map((entry) => entry.fileName)).toEqual(['supplier-invoice.pdf', 'delivery-note.pdf']);
  });

  it('skips images the HTML body shows by cid:, takes an inline named PDF and an unreferenced image', async () => {
    const record = await ingest(emlFixture('inline-images.eml'));
    const states = Object.fromEntries(record.attachments.map((entry) => [entry.fileName, entry.state]));
    expect(states).toEqual({
      'logo.png': 'skipped',
      'chart.jpg': 'skipped',
      'statement.pdf': 'uploaded',
      'receipt.png': 'uploaded',
    });
    expect(record.attachments.find((entry) => entry.fileName === 'logo.png')?.reason).toBe(
      'inline image referenced by the message body',
    );
  });

  it('decodes RFC 2231 and encoded-word names and strips paths and control characters', async () => {
    const record = await ingest(emlFixture('encoded-names.eml'));
    const names = record.attachments
      .filter((entry) => entry.state === 'uploaded')
      .map((entry) => entry.fileName);
    expect(names).toEqual(
      expect.arrayContaining([
        'Rechnung März.pdf',
        'Übersicht Quartal 1.xlsx',
        'Счет.pdf',
        'Köln Angebot.docx',
        'notes.txt',
      ]),
    );
    const forbidden = (char: string) => {
      const code = char.codePointAt(0) ?? 0;
      return (
        char === '/' || char === '\\' || code < 0x20 || code === 0x7f || (code >= 0x202a && code <= 0x202e)
      );
    };
    for (const name of names) expect([...name].filter(forbidden)).toEqual([]);
    const sent = uploadsOf(record).map((upload) => upload?.fields.fileName?.[0]);
    expect(sent).toEqual(expect.arrayContaining(['Rechnung März.pdf', 'notes.txt']));
  });

  it('uploads a message to two workspaces of one admission policy once for each', async () => {
    const record = await ingest(
      await composeMessage({
        from: 'ann@acme.example',
        attachments: [{ filename: 'both.pdf', content: uniquePdf('both') }],
      }),
      ['invoices@ingest.test', 'ledger@ingest.test'],
    );
    expect(record.attachments.map((entry) => [entry.workspace, entry.state])).toEqual([
      ['ws-acme', 'uploaded'],
      ['ws-ledger', 'uploaded'],
    ]);
    expect(uploadsOf(record).map((upload) => upload?.fields.workspace?.[0])).toEqual([
      'ws-acme',
      'ws-ledger',
    ]);
  });

  it('answers 452 4.5.3 at RCPT for a workspace of another admission policy, so no refusal is silent', async () => {
    const message = await composeMessage({
      from: 'someone@else.example',
      attachments: [{ filename: 'one.pdf', content: uniquePdf('one') }],
    });
    const { rcpt, data } = await deliver(harness.smtpPort, {
      to: ['documents@ingest.test', 'invoices@ingest.test', 'ledger@ingest.test'],
      message,
    });
    expect(rcpt.map((reply) => reply.code)).toEqual([250, 452, 452]);
    expect(rcpt[2]?.text).toMatch(/^452 4\.5\.3 <ledger@ingest\.test>: /);
    expect(rcpt[1]?.text).toMatch(/^452 4\.5\.3 <invoices@ingest\.test>: .*own transaction$/);
    const id = queuedId(data);
    await harness.settled(id, 0);
    const record = await harness.record(id);
    expect(record.envelope.rcptTo).toEqual(['documents@ingest.test']);
    expect(record.workspaces).toEqual([{ identifier: 'ws-open', admitted: true, reason: null }]);
    expect(record.attachments.map((entry) => [entry.workspace, entry.state])).toEqual([
      ['ws-open', 'uploaded'],
    ]);

    // The sending server retries the deferred recipients in a transaction of their own: one
    // policy, so one verdict for both, and a refusal it bounces.
    const retried = await deliver(harness.smtpPort, {
      to: ['invoices@ingest.test', 'ledger@ingest.test'],
      message,
    });
    expect(retried.rcpt.map((reply) => reply.code)).toEqual([250, 250]);
    expect(retried.data?.text).toMatch(/^550 5\.7\.1 sender someone@else\.example is not admitted/);
  });

  it('answers a repeated delivery of the same message with the same id and uploads once', async () => {
    const message = await composeMessage({
      attachments: [{ filename: 'twice.pdf', content: uniquePdf('twice') }],
    });
    const first = await deliver(harness.smtpPort, { to: ['documents@ingest.test'], message });
    const id = queuedId(first.data);
    await harness.settled(id, 0);
    const second = await deliver(harness.smtpPort, { to: ['documents@ingest.test'], message });
    expect(queuedId(second.data)).toBe(id);
    const uploads = harness.mock.uploads.filter((upload) => upload.file?.fileName === 'twice.pdf');
    expect(uploads).toHaveLength(1);
  });
});

describe('the same delivery over several connections at once', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(async () => harness?.close());

  it('is accepted under one id, the other copies asked to retry, and uploaded once', async () => {
    const message = await composeMessage({
      attachments: [{ filename: 'racing.pdf', content: uniquePdf('racing') }],
    });
    const replies = await Promise.all(
      Array.from({ length: 6 }, () => deliver(harness.smtpPort, { to: ['documents@ingest.test'], message })),
    );
    const texts = replies.map(({ data }) => data?.text ?? '');
    const accepted = texts.filter((text) => text.startsWith('250 '));
    expect(accepted.length).toBeGreaterThan(0);
    const ids = new Set(accepted.map((text) => queuedId({ code: 250, text })));
    expect(ids.size).toBe(1);
    for (const text of texts.filter((reply) => !reply.startsWith('250 '))) {
      expect(text).toBe('451 4.3.0 a copy of this message is being received; try again later');
    }
    const [id] = ids;
    expect(await harness.settled(id ?? '', 0)).toBe('completed');
    // A copy retried after the first one committed gets the same id.
    expect(queuedId((await deliver(harness.smtpPort, { to: ['documents@ingest.test'], message })).data)).toBe(
      id,
    );
    expect(harness.mock.uploads.filter((upload) => upload.file?.fileName === 'racing.pdf')).toHaveLength(1);
  });
});
