import type { ReceivedUpload } from '@ingest-gateway/mock-parsing-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { createOpenApiCheck, type OpenApiDocument } from '../../harness/openapi-check.ts';
import { deliver, queuedId, SmtpSession } from '../../harness/smtp-session.ts';

/**
 * Subaddresses through the whole gateway: a real SMTP client, real Redis and the mock parsing
 * API. `inbox+invoices@…` routes as `inbox@…`, the record keeps the tag, and the upload the
 * mock receives carries the fields `workspaces[].subaddresses` gives the tag.
 */

const inbox = {
  identifier: 'ws-inbox',
  ingestEmail: 'inbox@ingest.test',
  upload: { language: 'en', documentType: 'doc-default', llmHint: 'Anything' },
  subaddresses: {
    invoices: { documentType: 'doc-invoice', collection: 'col-invoices', llmHint: 'Totals in VND' },
  },
};
/** An ingest address that holds the separator: routed as written, never read as a tag. */
const literal = { identifier: 'ws-literal', ingestEmail: 'inbox+literal@ingest.test' };

let sequence = 0;

/** One message with one PDF to `to`, over SMTP; the replies, and the uploads it caused once settled. */
async function send(harness: Harness, to: string[]) {
  sequence += 1;
  const before = harness.mock.uploads.length;
  const message = await composeMessage({
    from: 'Ann <ann@acme.example>',
    to: to.join(', '),
    subject: `Subaddress ${sequence}`,
    messageId: `<subaddress-${sequence}@mail.example>`,
    attachments: [{ filename: 'invoice.pdf', content: uniquePdf(`subaddress-${sequence}-${to.join()}`) }],
  });
  const replies = await deliver(harness.smtpPort, { to, message });
  if (replies.data?.code !== 250) return { replies, id: null, uploads: [] as ReceivedUpload[] };
  const id = queuedId(replies.data);
  const record = await harness.record(id);
  for (const entry of record.attachments) expect(await harness.settled(id, entry.entry)).toBe('completed');
  return { replies, id, uploads: harness.mock.uploads.slice(before) };
}

describe('subaddresses (smtp.subaddressSeparator "+", the default)', () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startHarness({
      workspaces: [
        inbox,
        literal,
        { identifier: 'ws-books', ingestEmail: 'orders@bücher.example' },
        {
          identifier: 'ws-held',
          ingestEmail: 'held@ingest.test',
          whitelistIngestAddresses: ['*@partner.example'],
          unlistedSenders: 'hold',
          subaddresses: { invoices: { documentType: 'doc-held-invoice' } },
        },
      ],
    });
  });
  afterAll(async () => harness?.close());

  it('accepts inbox+invoices@, records the tag, and uploads with its fields over the workspace’s', async () => {
    const { replies, id, uploads } = await send(harness, ['inbox+invoices@ingest.test']);
    expect(replies.rcpt.map((reply) => reply.code)).toEqual([250]);
    expect(replies.data?.text).toMatch(/^250 2\.0\.0 queued as /);
    const record = await harness.record(id ?? '');
    expect(record.envelope.rcptTo).toEqual(['inbox+invoices@ingest.test']);
    expect(record.attachments).toMatchObject([
      { workspace: 'ws-inbox', subaddress: 'invoices', state: 'uploaded' },
    ]);
    // The record as served is what the OpenAPI description, every object closed, says it is.
    const document = (await (await fetch(`${harness.httpUrl}/v1/openapi.json`)).json()) as OpenApiDocument;
    const url = `${harness.httpUrl}/v1/messages/${id}`;
    await createOpenApiCheck(document).check('GET', url, await fetch(url));
    expect(uploads).toHaveLength(1);
    expect(uploads[0]?.fields).toMatchObject({
      workspace: ['ws-inbox'],
      collection: ['col-invoices'],
      documentType: ['doc-invoice'],
      llmHint: ['Totals in VND'],
      // Not given for the tag: the workspace's upload block still applies.
      language: ['en'],
    });
  });

  it('shows the tag on the console’s message page', async () => {
    const { id } = await send(harness, ['inbox+invoices@ingest.test']);
    const response = await fetch(`${harness.httpUrl}/messages/${id}`);
    expect(response.status).toBe(200);
    const page = await response.text();
    expect(page).toContain('<dt>Subaddress tag</dt><dd data-field="subaddress">invoices</dd>');
  });

  it('routes the base without case and the domain normalised, keeping the tag as written', async () => {
    const { replies, id, uploads } = await send(harness, ['INBOX+Invoices@INGEST.Test']);
    expect(replies.rcpt.map((reply) => reply.code)).toEqual([250]);
    expect((await harness.record(id ?? '')).attachments[0]?.subaddress).toBe('Invoices');
    expect(uploads[0]?.fields.documentType).toEqual(['doc-invoice']);

    // An IDN domain in its ASCII form (no SMTPUTF8 needed) is the same domain.
    const books = await send(harness, ['Orders+2024@XN--BCHER-KVA.example']);
    expect(books.replies.rcpt.map((reply) => reply.code)).toEqual([250]);
    expect((await harness.record(books.id ?? '')).attachments[0]).toMatchObject({
      workspace: 'ws-books',
      subaddress: '2024',
    });
  });

  it('uploads an unknown tag with the workspace’s fields, and mail without a tag records none', async () => {
    const tagged = await send(harness, ['inbox+unknown@ingest.test']);
    expect((await harness.record(tagged.id ?? '')).attachments[0]?.subaddress).toBe('unknown');
    expect(tagged.uploads[0]?.fields).toMatchObject({
      documentType: ['doc-default'],
      llmHint: ['Anything'],
      language: ['en'],
    });
    expect(tagged.uploads[0]?.fields).not.toHaveProperty('collection');

    const plain = await send(harness, ['inbox@ingest.test']);
    const entry = (await harness.record(plain.id ?? '')).attachments[0];
    expect(entry).not.toHaveProperty('subaddress');
    expect(plain.uploads[0]?.fields.documentType).toEqual(['doc-default']);
  });

  it('keeps the tag on held mail, and a release uploads with the tag’s fields', async () => {
    const before = harness.mock.uploads.length;
    const message = await composeMessage({
      to: 'held+invoices@ingest.test',
      messageId: '<held-tag@mail.example>',
      attachments: [{ filename: 'held.pdf', content: uniquePdf('held with a tag') }],
    });
    const { data } = await deliver(harness.smtpPort, { to: ['held+invoices@ingest.test'], message });
    const id = queuedId(data);
    const held = await harness.record(id);
    expect(held.state).toBe('held');
    expect(held.attachments).toMatchObject([{ workspace: 'ws-held', state: 'held', subaddress: 'invoices' }]);

    const release = await fetch(`${harness.httpUrl}/v1/messages/${id}/release`, { method: 'POST' });
    expect(release.status).toBe(200);
    expect(await harness.settled(id, 0)).toBe('completed');
    const uploads = harness.mock.uploads.slice(before);
    expect(uploads.map((upload) => upload.fields.documentType)).toEqual([['doc-held-invoice']]);
  });

  it('routes a literal address holding the separator as written, with no tag', async () => {
    const { id, uploads } = await send(harness, ['inbox+literal@ingest.test']);
    const entry = (await harness.record(id ?? '')).attachments[0];
    expect(entry).toMatchObject({ workspace: 'ws-literal' });
    expect(entry).not.toHaveProperty('subaddress');
    expect(uploads[0]?.fields.workspace).toEqual(['ws-literal']);
  });

  it('refuses a local part that starts with the separator: it has no base to route by', async () => {
    const { replies } = await send(harness, ['+invoices@ingest.test']);
    expect(replies.rcpt[0]?.text).toMatch(/^550 5\.1\.1 /);
    expect(replies.data).toBeNull();
  });

  it('takes one tag per workspace and transaction: another gets 452 4.5.3, for a transaction of its own', async () => {
    const session = new SmtpSession(harness.smtpPort);
    let id: string;
    try {
      await session.reply();
      await session.command('EHLO client.test');
      await session.command('MAIL FROM:<ann@acme.example>');
      expect((await session.command('RCPT TO:<inbox+invoices@ingest.test>')).code).toBe(250);
      const other = await session.command('RCPT TO:<inbox+receipts@ingest.test>');
      expect(other.text).toMatch(/^452 4\.5\.3 <inbox\+receipts@ingest\.test>: .*another tag/);
      const bare = await session.command('RCPT TO:<inbox@ingest.test>');
      expect(bare.text).toMatch(/^452 4\.5\.3 /);
      const message = await composeMessage({
        to: 'inbox+invoices@ingest.test, inbox+receipts@ingest.test',
        messageId: '<two-tags@mail.example>',
        attachments: [{ filename: 'invoice.pdf', content: uniquePdf('two tags') }],
      });
      id = queuedId(await session.data(message));
    } finally {
      await session.close();
    }
    expect(await harness.settled(id, 0)).toBe('completed');
    const record = await harness.record(id);
    expect(record.envelope.rcptTo).toEqual(['inbox+invoices@ingest.test']);
    expect(record.attachments.map((entry) => [entry.workspace, entry.subaddress])).toEqual([
      ['ws-inbox', 'invoices'],
    ]);
    // The refused recipient, delivered on its own as a sending server would: its own tag.
    const retried = await send(harness, ['inbox+receipts@ingest.test']);
    expect((await harness.record(retried.id ?? '')).attachments[0]?.subaddress).toBe('receipts');
    expect(retried.uploads[0]?.fields.documentType).toEqual(['doc-default']);
  });
});

describe('subaddresses turned off (smtp.subaddressSeparator null)', () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startHarness({
      smtp: { subaddressSeparator: null },
      workspaces: [{ identifier: 'ws-inbox', ingestEmail: 'inbox@ingest.test' }, literal],
    });
  });
  afterAll(async () => harness?.close());

  it('refuses a plus-address with 550 5.1.1', async () => {
    const { replies } = await send(harness, ['inbox+invoices@ingest.test']);
    expect(replies.rcpt[0]?.text).toMatch(
      /^550 5\.1\.1 <inbox\+invoices@ingest\.test>: no such ingest address here/,
    );
    expect(replies.data).toBeNull();
  });

  it('still routes an ingest address configured with the separator in it', async () => {
    const { id, uploads } = await send(harness, ['inbox+literal@ingest.test']);
    const entry = (await harness.record(id ?? '')).attachments[0];
    expect(entry).toMatchObject({ workspace: 'ws-literal', state: 'uploaded' });
    expect(entry).not.toHaveProperty('subaddress');
    expect(uploads[0]?.fields.workspace).toEqual(['ws-literal']);
  });
});
