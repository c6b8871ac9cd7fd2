import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { qpdf } from '../../harness/qpdf.ts';
import { deliver, queuedId } from '../../harness/smtp-session.ts';
import { zipArchive } from '../../harness/zip-archive.ts';
import type { MessageRecord } from '../../src/record/message-record.ts';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/**
 * Password-protected PDFs end to end through SMTP: made by qpdf in the test, skipped with
 * `encrypted_pdf` by a workspace with the default `encryptedPdf: skip`, uploaded by one that
 * sets `encryptedPdf: upload`.
 */
describe('encrypted PDFs end to end', () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startHarness({
      workspaces: [
        { identifier: 'ws-skip', ingestEmail: 'invoices@ingest.test' },
        { identifier: 'ws-upload', ingestEmail: 'locked@ingest.test', encryptedPdf: 'upload' },
        { identifier: 'ws-zip', ingestEmail: 'archives@ingest.test', archives: 'unpack' },
      ],
    });
  });
  afterAll(async () => harness?.close());

  /** A PDF locked by qpdf with AES-256, distinct per label (rejectDuplicates must not interfere). */
  const lockedPdf = (label: string, options: string[] = []) =>
    qpdf(uniquePdf(label), [...options, '--encrypt', 'user', 'owner', '256', '--']);

  async function ingest(message: Buffer, to: string): Promise<MessageRecord> {
    const { data } = await deliver(harness.smtpPort, { to: [to], message });
    const id = queuedId(data);
    const queued = (await harness.record(id)).attachments.filter((entry) => entry.workspace !== null);
    await Promise.all(queued.map((entry) => harness.settled(id, entry.entry)));
    return harness.record(id);
  }

  const uploadedHashes = () => harness.mock.uploads.map((upload) => upload.file?.sha256);

  it('skips the locked PDF with encrypted_pdf and uploads only the normal one', async () => {
    const locked = await lockedPdf('locked-beside-normal');
    const normal = await qpdf(uniquePdf('normal-beside-locked'), ['--object-streams=generate']);
    const message = await composeMessage({
      attachments: [
        { filename: 'statement.pdf', content: locked, contentType: 'application/pdf' },
        { filename: 'invoice.pdf', content: normal, contentType: 'application/pdf' },
      ],
    });
    const record = await ingest(message, 'invoices@ingest.test');
    const entries = record.attachments.map(({ fileName, state, reason, workspace }) => ({
      fileName,
      state,
      reason,
      workspace,
    }));
    expect(entries).toContainEqual({
      fileName: 'invoice.pdf',
      state: 'uploaded',
      reason: null,
      workspace: 'ws-skip',
    });
    expect(entries).toContainEqual({
      fileName: 'statement.pdf',
      state: 'skipped',
      reason: expect.stringMatching(/^encrypted_pdf: a password-protected PDF/),
      workspace: null,
    });
    expect(entries).toHaveLength(2);
    expect(uploadedHashes()).toContain(sha256(normal));
    expect(uploadedHashes()).not.toContain(sha256(locked));
  });

  it.each<[string, string[]]>([
    ['classic trailer', []],
    ['cross-reference stream (PDF 1.5 object streams)', ['--object-streams=generate']],
    ['empty user password', []],
  ])(
    'refuses a message whose only document is a locked PDF (%s) with 550 5.6.0 naming it encrypted',
    async (label, options) => {
      const pdf =
        label === 'empty user password'
          ? await qpdf(uniquePdf(label), ['--encrypt', '', 'owner', '256', '--'])
          : await lockedPdf(label, options);
      const message = await composeMessage({
        attachments: [{ filename: 'payslip.pdf', content: pdf, contentType: 'application/pdf' }],
      });
      const { data } = await deliver(harness.smtpPort, { to: ['invoices@ingest.test'], message });
      expect(data?.code).toBe(550);
      expect(data?.text).toMatch(
        /^550 5\.6\.0 no supported attachment: found 1 part: payslip\.pdf \(encrypted PDF\)/,
      );
      expect(uploadedHashes()).not.toContain(sha256(pdf));
    },
  );

  it('skips a locked PDF taken out of a ZIP archive as it skips an attached one', async () => {
    const locked = await lockedPdf('locked-in-zip');
    const normal = uniquePdf('normal-in-zip');
    const message = await composeMessage({
      attachments: [
        {
          filename: 'statements.zip',
          content: zipArchive([
            ['locked.pdf', locked],
            ['normal.pdf', normal],
          ]),
          contentType: 'application/zip',
        },
      ],
    });
    const record = await ingest(message, 'archives@ingest.test');
    const byName = new Map(record.attachments.map((entry) => [entry.fileName, entry]));
    expect(byName.get('locked.pdf')?.state).toBe('skipped');
    expect(byName.get('locked.pdf')?.reason).toMatch(/^encrypted_pdf/);
    expect(byName.get('normal.pdf')?.state).toBe('uploaded');
    expect(uploadedHashes()).toContain(sha256(normal));
    expect(uploadedHashes()).not.toContain(sha256(locked));
  });

  it('uploads the locked PDF, bytes unchanged, for a workspace that sets encryptedPdf: upload', async () => {
    const locked = await lockedPdf('locked-for-upload');
    const message = await composeMessage({
      attachments: [{ filename: 'payslip.pdf', content: locked, contentType: 'application/pdf' }],
    });
    const record = await ingest(message, 'locked@ingest.test');
    expect(
      record.attachments.map(({ fileName, state, workspace }) => ({ fileName, state, workspace })),
    ).toEqual([{ fileName: 'payslip.pdf', state: 'uploaded', workspace: 'ws-upload' }]);
    expect(uploadedHashes()).toContain(sha256(locked));
  });
});
