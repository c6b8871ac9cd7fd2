import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { sha256 } from '../../harness/mail-fixtures.ts';
import {
  emlFixture,
  multipartMessage,
  type RawAttachment,
  sampleFile,
  uniquePdf,
} from '../../harness/messages.ts';
import { deliver, queuedId } from '../../harness/smtp-session.ts';
import type { MessageRecord } from '../../src/record/message-record.ts';

/**
 * The real-world corpus (test/fixtures/containers/README.md, test/fixtures/mail/README.md),
 * each message through real SMTP into a real gateway and the mock API: every document the
 * message holds arrives under its name with its bytes (sha256), to each workspace it is
 * meant for, and every part that is not a document is recorded with its reason.
 */

const container = (name: string) => readFileSync(new URL(`../fixtures/containers/${name}`, import.meta.url));
/** The corpus's own messages: a short body and the attachments given. */
const corpusMessage = (attachments: readonly RawAttachment[]) =>
  multipartMessage(attachments, { subject: 'corpus' });
const beside = uniquePdf('corpus: a document beside the container');
const besideDoc = ['part 3 > invoice.pdf', 'invoice.pdf', sha256(beside)] as const;

/**
 * Workspaces of one admission policy: one unpacks archives, one does not; one takes the body
 * when nothing else is a document, one always (the others never).
 */
const workspaces = [
  { identifier: 'ws-skip', ingestEmail: 'documents@ingest.test' },
  { identifier: 'ws-unpack', ingestEmail: 'unpack@ingest.test', archives: 'unpack' as const },
  { identifier: 'ws-body', ingestEmail: 'body@ingest.test', bodyAsDocument: 'whenNoAttachment' as const },
  { identifier: 'ws-always', ingestEmail: 'always@ingest.test', bodyAsDocument: 'always' as const },
];

/**
 * The body documents of html-invoice.eml and text-order.eml: their bodies decoded by Python's
 * email package and codecs, written as UTF-8 (the HTML behind a byte order mark), hashed.
 */
const htmlInvoice = [
  'body (text/html)',
  'Rechnung 2024-117 \u2013 B\u00fcro M\u00fcller.html',
  '05014f23853f0138fee27b7807f13ebaaada9b22a057562d7dfb229caa04eb12',
] as const;
const textOrder = [
  'body (text/plain)',
  'Bestellung 5531.txt',
  'c04f698e26f6bde12e9fb4656886a9de046a5b869012ba524fda609a4df2faa6',
] as const;
const inlineLogo = ['part 2 > logo.png', 'inline image referenced by the message body'] as const;

interface Case {
  name: string;
  message: Buffer;
  to: string[];
  /** [path, name sent, sha256 of the bytes, workspace] of every upload. */
  documents: Array<readonly [string, string, string, string]>;
  /** [path, reason] of every skipped part (a RegExp for reasons that quote a library). */
  skipped: Array<readonly [string, string | RegExp]>;
}

const both = ['documents@ingest.test', 'unpack@ingest.test'];
const forEach = (workspaceIds: string[], docs: ReadonlyArray<readonly [string, string, string]>) =>
  workspaceIds.flatMap((workspace) =>
    docs.map(([path, name, hash]) => [path, name, hash, workspace] as const),
  );

const cases: Case[] = [
  {
    name: 'a TNEF winmail.dat written by Outlook (node-tnef test data): a JPG and an HTML page',
    message: corpusMessage([['winmail.dat', 'application/ms-tnef', container('winmail-outlook.dat')]]),
    to: ['documents@ingest.test'],
    documents: forEach(
      ['ws-skip'],
      [
        [
          'part 2 > winmail.dat > zappa_av1.jpg',
          'zappa_av1.jpg',
          'bea844f30e0fcc20fad419a0d11032a6465da93c1da185a1196949955994409a',
        ],
        [
          'part 2 > winmail.dat > bookmark.htm',
          'bookmark.htm',
          '1e08d6e23c75ff80ac992eebc24c2943c7843b7dfee235966b37de5eb4362599',
        ],
      ],
    ),
    skipped: [
      [
        'part 2 > winmail.dat',
        'a TNEF container (application/ms-tnef), opened: its 2 files are listed on their own',
      ],
    ],
  },
  {
    name: 'a TNEF winmail.dat with a PDF and a DOC, named by their long names',
    message: corpusMessage([['winmail.dat', 'application/ms-tnef', container('winmail-pdf-doc.dat')]]),
    to: ['documents@ingest.test'],
    documents: forEach(
      ['ws-skip'],
      [
        [
          'part 2 > winmail.dat > Rechnung März 2024.pdf',
          'Rechnung März 2024.pdf',
          sha256(sampleFile('sample.pdf')),
        ],
        ['part 2 > winmail.dat > contract.doc', 'contract.doc', sha256(sampleFile('sample.doc'))],
      ],
    ),
    skipped: [
      [
        'part 2 > winmail.dat',
        'a TNEF container (application/ms-tnef), opened: its 2 files are listed on their own',
      ],
    ],
  },
  {
    name: 'a TNEF winmail.dat whose files are only in their MAPI properties (PR_ATTACH_DATA_OBJ/BIN)',
    message: corpusMessage([['winmail.dat', 'application/ms-tnef', container('winmail-mapi-data.dat')]]),
    to: ['documents@ingest.test'],
    documents: forEach(
      ['ws-skip'],
      [
        ['part 2 > winmail.dat > Vertrag Müller.doc', 'Vertrag Müller.doc', sha256(sampleFile('sample.doc'))],
        ['part 2 > winmail.dat > INVOICE.PDF', 'INVOICE.PDF', sha256(sampleFile('sample.pdf'))],
        ['part 2 > winmail.dat > page.html', 'page.html', sha256(sampleFile('sample.html'))],
      ],
    ),
    skipped: [
      [
        'part 2 > winmail.dat',
        'a TNEF container (application/ms-tnef), opened: its 3 files are listed on their own',
      ],
    ],
  },
  {
    name: 'a TNEF winmail.dat with an embedded message (PR_ATTACH_METHOD 5) carrying a PDF, an XLSX and an older item',
    message: corpusMessage([['winmail.dat', 'application/ms-tnef', container('winmail-embedded.dat')]]),
    to: ['documents@ingest.test'],
    documents: forEach(
      ['ws-skip'],
      [
        ['part 2 > winmail.dat > contract.doc', 'contract.doc', sha256(sampleFile('sample.doc'))],
        [
          'part 2 > winmail.dat > Fwd: Rechnung 4711 > Rechnung 4711.pdf',
          'Rechnung 4711.pdf',
          sha256(sampleFile('sample.pdf')),
        ],
        [
          'part 2 > winmail.dat > Fwd: Rechnung 4711 > Positionen.xlsx',
          'Positionen.xlsx',
          sha256(sampleFile('sample.xlsx')),
        ],
      ],
    ),
    skipped: [
      [
        'part 2 > winmail.dat',
        'a TNEF container (application/ms-tnef), opened: its 4 files are listed on their own',
      ],
      [
        'part 2 > winmail.dat > Fwd: Rechnung 4711 > Fwd: Lieferschein',
        'an Outlook item inside an embedded Outlook item, not opened (containers are opened one level deep)',
      ],
    ],
  },
  {
    name: 'a truncated TNEF (node-tnef panic.dat) beside an invoice',
    message: corpusMessage([
      ['winmail.dat', 'application/ms-tnef', container('winmail-truncated.dat')],
      ['invoice.pdf', 'application/pdf', beside],
    ]),
    to: ['documents@ingest.test'],
    documents: forEach(['ws-skip'], [besideDoc]),
    skipped: [
      [
        'part 2 > winmail.dat',
        'a TNEF container (application/ms-tnef) that cannot be opened: it is cut short: an attribute runs past its end',
      ],
    ],
  },
  {
    name: 'an Outlook item (written by oxmsg) forwarded as attachment',
    message: corpusMessage([
      ['Invoice and contract.msg', 'application/vnd.ms-outlook', container('forwarded.msg')],
    ]),
    to: ['documents@ingest.test'],
    documents: forEach(
      ['ws-skip'],
      [
        [
          'part 2 > Invoice and contract.msg > Rechnung März.pdf',
          'Rechnung März.pdf',
          sha256(sampleFile('sample.pdf')),
        ],
        [
          'part 2 > Invoice and contract.msg > contract.docx',
          'contract.docx',
          sha256(sampleFile('sample.docx')),
        ],
      ],
    ),
    skipped: [
      [
        'part 2 > Invoice and contract.msg',
        'an Outlook item (.msg), opened: its 3 files are listed on their own',
      ],
      ['part 2 > Invoice and contract.msg > logo.gif', 'unsupported type image/gif (declared image/gif)'],
    ],
  },
  {
    name: 'an Outlook item whose mini FAT loops, beside an invoice',
    message: corpusMessage([
      ['broken.msg', 'application/vnd.ms-outlook', container('broken-fat.msg')],
      ['invoice.pdf', 'application/pdf', beside],
    ]),
    to: ['documents@ingest.test'],
    documents: forEach(['ws-skip'], [besideDoc]),
    // The reader loops allocating: the heap bound stops it, or on a busy machine the step
    // bound first. Either way it is stopped, and the invoice beside it goes through.
    skipped: [
      [
        'part 2 > broken.msg',
        /^an Outlook item \(\.msg\) that cannot be opened: reading it (needed more than the 128 MB|took longer than 10 s)/,
      ],
    ],
  },
  {
    name: 'a ZIP archive to a workspace that unpacks and one that does not',
    message: corpusMessage([
      ['invoices.zip', 'application/zip', container('invoices.zip')],
      ['invoice.pdf', 'application/pdf', beside],
    ]),
    to: both,
    documents: [
      ...forEach(['ws-skip'], [besideDoc]),
      ...forEach(
        ['ws-unpack'],
        [
          besideDoc,
          ['part 2 > invoices.zip > invoices/invoice.pdf', 'invoice.pdf', sha256(sampleFile('sample.pdf'))],
          ['part 2 > invoices.zip > notes.txt', 'notes.txt', sha256(sampleFile('sample.txt'))],
        ],
      ),
    ],
    skipped: [
      [
        'part 2 > invoices.zip',
        'a ZIP archive, opened: its 3 files are listed on their own, for the workspaces that set archives: unpack',
      ],
      [
        'part 2 > invoices.zip > setup.exe',
        'unsupported type application/x-msdownload (declared application/octet-stream)',
      ],
    ],
  },
  {
    name: 'a ZIP archive to a workspace that skips archives',
    message: corpusMessage([
      ['invoices.zip', 'application/zip', container('invoices.zip')],
      ['invoice.pdf', 'application/pdf', beside],
    ]),
    to: ['documents@ingest.test'],
    documents: forEach(['ws-skip'], [besideDoc]),
    skipped: [
      [
        'part 2 > invoices.zip',
        'a ZIP archive, not opened: no workspace it is addressed to sets archives: unpack',
      ],
    ],
  },
  {
    name: 'a ZIP archive holding another',
    message: corpusMessage([['nested.zip', 'application/zip', container('nested.zip')]]),
    to: ['unpack@ingest.test'],
    documents: forEach(
      ['ws-unpack'],
      [['part 2 > nested.zip > contract.docx', 'contract.docx', sha256(sampleFile('sample.docx'))]],
    ),
    skipped: [
      [
        'part 2 > nested.zip',
        'a ZIP archive, opened: its 2 files are listed on their own, for the workspaces that set archives: unpack',
      ],
      [
        'part 2 > nested.zip > more.zip',
        'a ZIP archive inside a container, not opened (containers are opened one level deep)',
      ],
    ],
  },
  {
    name: 'a ZIP archive with an encrypted entry',
    message: corpusMessage([['encrypted.zip', 'application/zip', container('encrypted.zip')]]),
    to: ['unpack@ingest.test'],
    documents: forEach(
      ['ws-unpack'],
      [['part 2 > encrypted.zip > readme.txt', 'readme.txt', sha256(sampleFile('sample.txt'))]],
    ),
    skipped: [
      [
        'part 2 > encrypted.zip',
        'a ZIP archive, opened: its 2 files are listed on their own, for the workspaces that set archives: unpack',
      ],
      ['part 2 > encrypted.zip > secret.pdf', 'encrypted in the archive, so it cannot be read'],
    ],
  },
  {
    name: 'a zip bomb beside an invoice',
    message: corpusMessage([
      ['bomb.zip', 'application/zip', container('bomb.zip')],
      ['invoice.pdf', 'application/pdf', beside],
    ]),
    to: ['unpack@ingest.test'],
    documents: forEach(['ws-unpack'], [besideDoc]),
    skipped: [
      [
        'part 2 > bomb.zip',
        /^a ZIP archive that cannot be opened: "invoice.pdf" inflates \d+ times .* \(a zip bomb\)$/,
      ],
    ],
  },
  {
    name: 'a ZIP archive of 10,000 entries beside an invoice',
    message: corpusMessage([
      ['many.zip', 'application/zip', container('many-entries.zip')],
      ['invoice.pdf', 'application/pdf', beside],
    ]),
    to: ['unpack@ingest.test'],
    documents: forEach(['ws-unpack'], [besideDoc]),
    skipped: [
      [
        'part 2 > many.zip',
        'a ZIP archive that cannot be opened: it holds 10000 entries, more than the 100 this server reads',
      ],
    ],
  },
  {
    name: 'uuencoded parts (test/fixtures/mail/uuencoded.eml)',
    message: emlFixture('uuencoded.eml'),
    to: ['documents@ingest.test'],
    documents: forEach(
      ['ws-skip'],
      [
        ['part 2 > invoice-uu.pdf', 'invoice-uu.pdf', sha256(sampleFile('sample.pdf'))],
        // The name is on the `begin` line only; the bytes are sample.pdf and `%second`.
        [
          'part 3 > named-by-begin.pdf',
          'named-by-begin.pdf',
          sha256(Buffer.concat([sampleFile('sample.pdf'), Buffer.from('%second')])),
        ],
        ['part 4 > scan.png', 'scan.png', sha256(sampleFile('image.png'))],
      ],
    ),
    skipped: [],
  },
  {
    name: 'a body-only HTML invoice in windows-1252 (html-invoice.eml), to a workspace that takes the body when nothing else is a document',
    message: emlFixture('html-invoice.eml'),
    to: ['documents@ingest.test', 'body@ingest.test'],
    documents: forEach(['ws-body'], [htmlInvoice]),
    skipped: [inlineLogo],
  },
  {
    name: 'a body-only HTML invoice to a workspace that always takes the body',
    message: emlFixture('html-invoice.eml'),
    to: ['always@ingest.test'],
    documents: forEach(['ws-always'], [htmlInvoice]),
    skipped: [inlineLogo],
  },
  {
    name: 'a Latin-1 text order (text-order.eml) arrives as UTF-8',
    message: emlFixture('text-order.eml'),
    to: ['body@ingest.test'],
    documents: forEach(['ws-body'], [textOrder]),
    skipped: [],
  },
  {
    name: 'a text body and a PDF to workspaces that take the body never, when nothing else is, and always',
    message: corpusMessage([['invoice.pdf', 'application/pdf', beside]]),
    to: ['documents@ingest.test', 'body@ingest.test', 'always@ingest.test'],
    documents: [
      ...forEach(['ws-skip', 'ws-body'], [['part 2 > invoice.pdf', 'invoice.pdf', sha256(beside)]]),
      ...forEach(
        ['ws-always'],
        [
          ['body (text/plain)', 'corpus.txt', sha256(Buffer.from('Attached.'))],
          ['part 2 > invoice.pdf', 'invoice.pdf', sha256(beside)],
        ],
      ),
    ],
    skipped: [],
  },
];

describe('the real-world corpus end to end', () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startHarness({ workspaces });
  });
  afterAll(async () => {
    await harness?.close();
  });

  it.each(cases)('$name', async ({ message, to, documents, skipped }) => {
    const { data } = await deliver(harness.smtpPort, { to, message });
    const id = queuedId(data);
    const queued = (await harness.record(id)).attachments.filter((entry) => entry.workspace !== null);
    await Promise.all(queued.map((entry) => harness.settled(id, entry.entry)));
    const record: MessageRecord = await harness.record(id);

    const uploaded = record.attachments
      .filter((entry) => entry.workspace !== null)
      .map((entry) => {
        const upload = harness.mock.uploads.find(
          (each) => each.documentIdentifier === entry.documentIdentifier,
        );
        return [entry.path, upload?.file?.fileName, upload?.file?.sha256, entry.workspace];
      });
    expect(uploaded).toEqual(documents);
    const skips = record.attachments
      .filter((entry) => entry.state === 'skipped')
      .map((entry) => [entry.path, entry.reason]);
    expect(skips).toEqual(
      skipped.map(([path, reason]) => [
        path,
        typeof reason === 'string' ? reason : expect.stringMatching(reason),
      ]),
    );
  });

  it.each([
    ['pointers to content stored elsewhere', 'external-body.eml'],
    ['a bounce that returns the invoice it could not deliver', 'bounce-with-invoice.eml'],
    ['a read receipt', 'read-receipt.eml'],
  ])('refuses %s with 550 5.6.0: nothing in it is a document', async (_case, file) => {
    const { data } = await deliver(harness.smtpPort, {
      to: ['documents@ingest.test'],
      message: emlFixture(file),
    });
    expect(data?.text).toMatch(/^550 5\.6\.0 no supported attachment: found \d parts: /);
  });

  it('refuses a body-only HTML invoice with 550 5.6.0 where no workspace takes the body', async () => {
    const { data } = await deliver(harness.smtpPort, {
      to: ['documents@ingest.test', 'unpack@ingest.test'],
      message: emlFixture('html-invoice.eml'),
    });
    expect(data?.text).toBe('550 5.6.0 no supported attachment: found 1 part: logo.png (image/png)');
  });

  it('sends a body document as the UTF-8 text its charset spelled', async () => {
    const { data } = await deliver(harness.smtpPort, {
      to: ['body@ingest.test'],
      message: emlFixture('text-order.eml'),
    });
    const id = queuedId(data);
    await harness.settled(id, 0);
    const entry = (await harness.record(id)).attachments[0];
    const upload = harness.mock.uploads.find((each) => each.documentIdentifier === entry?.documentIdentifier);
    const text = new TextDecoder('utf-8', { fatal: true }).decode(upload?.file?.bytes);
    expect(text).toContain('Lieferung an: J\u00fcrgen Wei\u00df, Hauptstra\u00dfe 7, 1010 Wien\r\n');
    expect(upload?.file?.contentType).toBe('text/plain');
  });
});
