import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKey, type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { composeMessage, emlFixture, sampleFile, uniquePdf } from '../../harness/messages.ts';
import { deliver, queuedId } from '../../harness/smtp-session.ts';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** Every reply of the README's table of replies, through a real SMTP session, each checked for its effect. */
describe('SMTP replies', () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startHarness({
      smtp: { maxMessageSize: 400000, maxPartSize: 150000 },
    });
  });
  afterAll(async () => harness?.close());

  it('greets with the configured host name', async () => {
    const { greeting } = await deliver(harness.smtpPort, { to: [], message: '' });
    expect(greeting.text).toMatch(/^220 gateway\.test ESMTP/);
  });

  it('accepts a PDF with 250 2.0.0 queued as <id> and uploads it with every field', async () => {
    const pdf = uniquePdf('accepted');
    const message = await composeMessage({
      from: 'Ann <ann@acme.example>',
      subject: 'March invoice',
      messageId: '<march-invoice@acme.example>',
      attachments: [{ filename: 'invoice.pdf', content: pdf, contentType: 'application/pdf' }],
    });
    const { data } = await deliver(harness.smtpPort, {
      from: 'bounce@acme.example',
      to: ['invoices@ingest.test'],
      message,
    });
    expect(data?.text).toMatch(/^250 2\.0\.0 queued as [0-9a-z]+$/);
    const id = queuedId(data);

    expect(await harness.settled(id, 0)).toBe('completed');
    const [upload] = harness.mock.uploads;
    expect(upload?.authorization).toBe(`Bearer ${apiKey}`);
    expect(upload?.file?.fileName).toBe('invoice.pdf');
    expect(upload?.file?.sha256).toBe(sha256(pdf));
    expect(upload?.fields).toMatchObject({
      workspace: ['ws-acme'],
      collection: ['col-invoices'],
      documentType: ['doc-invoice'],
      fileName: ['invoice.pdf'],
      wait: ['false'],
      rejectDuplicates: ['true'],
      language: ['en'],
    });

    const record = await harness.record(id);
    expect(record).toMatchObject({
      id,
      messageId: 'march-invoice@acme.example',
      subject: 'March invoice',
      from: 'ann@acme.example',
      sourceEmailAddress: 'ann@acme.example',
      envelope: { mailFrom: 'bounce@acme.example', rcptTo: ['invoices@ingest.test'] },
    });
    expect(record.attachments).toEqual([
      expect.objectContaining({
        fileName: 'invoice.pdf',
        contentType: 'application/pdf',
        detectedType: 'application/pdf',
        size: pdf.length,
        sha256: sha256(pdf),
        workspace: 'ws-acme',
        state: 'uploaded',
        documentIdentifier: upload?.documentIdentifier,
        attempts: 1,
      }),
    ]);

    // The document leads back to its e-mail, and the e-mail is served as received.
    const source = await (
      await fetch(`${harness.httpUrl}/v1/documents/${upload?.documentIdentifier}`)
    ).json();
    expect(source).toMatchObject({
      messageId: id,
      workspace: 'ws-acme',
      fileName: 'invoice.pdf',
      sourceEmail: record.sourceEmail,
      sourceEmailAddress: 'ann@acme.example',
    });
    expect(record.sourceEmail).toBe(`${harness.httpUrl}/v1/messages/${id}/raw`);
    const raw = await fetch(record.sourceEmail);
    expect(raw.headers.get('content-type')).toBe('message/rfc822');
    expect(Buffer.from(await raw.arrayBuffer()).toString()).toBe(
      message.toString().replace(/\r?\n/g, '\r\n'),
    );
  });

  it('refuses an unknown recipient at RCPT with 550 5.1.1 and never reaches DATA', async () => {
    const { rcpt, data } = await deliver(harness.smtpPort, {
      to: ['someone@elsewhere.example'],
      message: await composeMessage({ attachments: [{ filename: 'a.pdf', content: uniquePdf('rcpt') }] }),
    });
    expect(rcpt[0]?.text).toMatch(/^550 5\.1\.1 /);
    expect(data).toBeNull();
  });

  it('refuses a sender outside the allow-list with 550 5.7.1', async () => {
    const before = harness.mock.uploads.length;
    const { data } = await deliver(harness.smtpPort, {
      to: ['invoices@ingest.test'],
      message: await composeMessage({
        from: 'mallory@evil.test',
        attachments: [{ filename: 'a.pdf', content: uniquePdf('evil') }],
      }),
    });
    expect(data?.text).toMatch(/^550 5\.7\.1 sender mallory@evil\.test is not admitted/);
    expect(harness.mock.uploads.length).toBe(before);
  });

  it('refuses two From headers with 550 5.7.1 for a workspace with an allow-list', async () => {
    const { data } = await deliver(harness.smtpPort, {
      to: ['invoices@ingest.test'],
      message: emlFixture('two-from.eml'),
    });
    expect(data?.text).toMatch(/^550 5\.7\.1 /);
  });

  it('refuses a message over maxMessageSize with 552 5.3.4', async () => {
    const { data } = await deliver(harness.smtpPort, {
      to: ['documents@ingest.test'],
      message: await composeMessage({
        // Three parts each under maxPartSize (150000), together over maxMessageSize (400000):
        // only the message's size is over a limit, whichever the walk notices first.
        attachments: ['big-1', 'big-2', 'big-3'].map((name) => ({
          filename: `${name}.pdf`,
          content: Buffer.concat([uniquePdf(name), Buffer.alloc(140_000, 32)]),
        })),
      }),
    });
    expect(data?.text).toMatch(/^552 5\.3\.4 message exceeds/);
  });

  it('refuses an attachment over maxPartSize with 552 5.3.4 naming it', async () => {
    const { data } = await deliver(harness.smtpPort, {
      to: ['documents@ingest.test'],
      message: await composeMessage({
        attachments: [
          { filename: 'large.pdf', content: Buffer.concat([uniquePdf('large'), Buffer.alloc(200_000, 32)]) },
        ],
      }),
    });
    expect(data?.text).toMatch(/^552 5\.3\.4 .*large\.pdf/);
  });

  it('refuses more than maxAttachments supported attachments with 550 5.7.0', async () => {
    const attachments = Array.from({ length: 11 }, (_, i) => ({
      filename: `p${i}.pdf`,
      content: uniquePdf(`many-${i}`),
    }));
    const { data } = await deliver(harness.smtpPort, {
      to: ['documents@ingest.test'],
      message: await composeMessage({ attachments }),
    });
    expect(data?.text).toMatch(/^550 5\.7\.0 11 supported attachments, at most 10/);
  });

  it('refuses a message with no supported attachment with 550 5.6.0 saying what it found', async () => {
    const { data } = await deliver(harness.smtpPort, {
      to: ['documents@ingest.test'],
      message: await composeMessage({
        attachments: [
          { filename: 'archive.zip', content: sampleFile('archive.zip'), contentType: 'application/zip' },
        ],
      }),
    });
    expect(data?.text).toMatch(/^550 5\.6\.0 no supported attachment: .*archive\.zip/);
  });

  it('does not take an executable named invoice.pdf: 550 5.6.0 names what it is', async () => {
    const { data } = await deliver(harness.smtpPort, {
      to: ['documents@ingest.test'],
      message: emlFixture('unsupported.eml'),
    });
    expect(data?.text).toMatch(
      /^550 5\.6\.0 no supported attachment: .*invoice\.pdf \(application\/x-msdownload\)/,
    );
  });
});
