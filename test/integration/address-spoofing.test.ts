import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { uniquePdf } from '../../harness/messages.ts';
import { deliver, queuedId } from '../../harness/smtp-session.ts';
import type { WorkspaceInput } from '../../harness/test-config.ts';

/**
 * The sender check (docs/architecture.md), end to end: From headers that try to pass for an allowed
 * sender, sent through SMTP to a workspace allowing `*@acme.example`, each answered with its exact
 * reply and none uploaded; and the spellings of an allowed address that must still get through. The
 * whitelist unit tables (test/unit/whitelist) hold the same cases one layer down; this proves the
 * MIME walk hands the header over as written and the intake applies the verdict.
 */

const workspaces: WorkspaceInput[] = [
  { identifier: 'ws-acme', ingestEmail: 'acme@ingest.test', whitelistIngestAddresses: ['*@acme.example'] },
  { identifier: 'ws-idn', ingestEmail: 'idn@ingest.test', whitelistIngestAddresses: ['*@bücher.example'] },
];

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/**
 * A message with these From header lines written byte for byte (UTF-8), no encoding or
 * folding by a composer, and one PDF so that only the sender decides its fate.
 */
function messageWithFrom(
  fromLines: readonly string[],
  label: string,
  to: string,
): { pdf: Buffer; raw: Buffer } {
  const pdf = uniquePdf(label);
  const boundary = `b-${label}`;
  const text = [
    ...fromLines.map((line) => `From: ${line}`),
    `To: ${to}`,
    `Subject: ${label}`,
    `Message-ID: <${label}@spoof.test>`,
    'MIME-Version: 1.0',
    `Content-Type: multipart/mixed; boundary="${boundary}"`,
    '',
    `--${boundary}`,
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Invoice attached.',
    `--${boundary}`,
    'Content-Type: application/pdf; name="invoice.pdf"',
    'Content-Disposition: attachment; filename="invoice.pdf"',
    'Content-Transfer-Encoding: base64',
    '',
    ...(pdf.toString('base64').match(/.{1,76}/g) ?? []),
    `--${boundary}--`,
    '',
  ].join('\r\n');
  return { pdf, raw: Buffer.from(text, 'utf8') };
}

describe('From addresses that must not pass for *@acme.example', () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startHarness({ workspaces });
  });
  afterAll(async () => harness?.close());

  async function send(fromLines: readonly string[], label: string, to = 'acme@ingest.test') {
    const { pdf, raw } = messageWithFrom(fromLines, label, to);
    const { data } = await deliver(harness.smtpPort, { from: 'bounce@relay.test', to: [to], message: raw });
    return { pdf, reply: data?.text };
  }

  const notAdmitted = (address: string) => `550 5.7.1 sender ${address} is not admitted for this address`;
  const unusable = (reason: string) => `550 5.7.1 sender not admitted: ${reason}`;

  it.each([
    ['a subdomain', ['a@sub.acme.example'], notAdmitted('a@sub.acme.example')],
    ['a longer domain', ['a@acme.example.evil'], notAdmitted('a@acme.example.evil')],
    ['a domain that ends the same', ['a@evilacme.example'], notAdmitted('a@evilacme.example')],
    [
      'an address as the quoted display name',
      ['"ann@acme.example" <m@evil.test>'],
      notAdmitted('m@evil.test'),
    ],
    [
      'an address in a quoted local part',
      ['"ann@acme.example x"@evil.test'],
      unusable('From address is malformed'),
    ],
    ['a comment splitting the domain', ['ann@acme.example(x)evil.test'], unusable('From is malformed')],
    [
      'a NUL byte before a second @',
      ['ann@acme.example\u0000@evil.test'],
      unusable('From holds a control character'),
    ],
    ['two From headers', ['ann@acme.example', 'bob@acme.example'], unusable('2 From headers')],
    ['a From with two mailboxes', ['ann@acme.example, m@evil.test'], unusable('From holds 2 mailboxes')],
    ['a group', ['Staff: ann@acme.example;'], unusable('From is a group')],
    ['an empty From', [''], unusable('From is empty')],
    [
      'an encoded-word display name that decodes to an address',
      ['=?utf-8?B?YW5uQGFjbWUuZXhhbXBsZQ==?= <m@evil.test>'],
      notAdmitted('m@evil.test'),
    ],
  ])('refuses %s', async (label, fromLines, expected) => {
    const { pdf, reply } = await send(fromLines, `refused-${label.replaceAll(/\W+/g, '-')}`);
    expect(reply).toBe(expected);
    expect(harness.mock.uploads.filter((upload) => upload.file?.sha256 === sha256(pdf))).toEqual([]);
  });

  it.each([
    ['upper case', 'ANN@ACME.EXAMPLE', 'acme@ingest.test', 'ws-acme', 'ANN@acme.example'],
    ['a trailing dot', 'ann@acme.example.', 'acme@ingest.test', 'ws-acme', 'ann@acme.example'],
    [
      'the IDN form of an allowed IDN domain',
      'Ann <a@bücher.example>',
      'idn@ingest.test',
      'ws-idn',
      'a@xn--bcher-kva.example',
    ],
    ['its punycode form', 'a@xn--bcher-kva.example', 'idn@ingest.test', 'ws-idn', 'a@xn--bcher-kva.example'],
  ])('admits %s and uploads it', async (label, from, to, workspace, recorded) => {
    const { pdf, reply } = await send([from], `admitted-${label.replaceAll(/\W+/g, '-')}`, to);
    expect(reply).toMatch(/^250 2\.0\.0 queued as [0-9a-z]+$/);
    const id = queuedId({ code: 250, text: reply ?? '' });
    expect(await harness.settled(id, 0)).toBe('completed');
    const uploads = harness.mock.uploads.filter((upload) => upload.file?.sha256 === sha256(pdf));
    expect(uploads.map((upload) => upload.fields.workspace)).toEqual([[workspace]]);
    expect((await harness.record(id)).from).toBe(recorded);
  });
});
