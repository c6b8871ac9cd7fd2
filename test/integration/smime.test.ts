import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { sha256 } from '../../harness/mail-fixtures.ts';
import { multipartMessage, uniquePdf } from '../../harness/messages.ts';
import { deliver, queuedId } from '../../harness/smtp-session.ts';
import type { MessageRecord } from '../../src/record/message-record.ts';

/**
 * S/MIME mail as OpenSSL writes it (docs/architecture.md, "Signed and encrypted mail"), each
 * message made here by `openssl smime` with a certificate and key OpenSSL makes for the test,
 * through real SMTP into a real gateway and the mock API.
 */

const to = 'documents@ingest.test';
/** A workspace with its own S/MIME key and certificate, which encrypted mail is sent to. */
const secure = 'secure@ingest.test';
/** A workspace whose key file is missing. */
const broken = 'broken@ingest.test';
const invoice = uniquePdf('smime: the signed invoice');

/** The MIME entity a mail client signs or encrypts: a short text and a PDF. */
function entity(pdf: Buffer): Buffer {
  const lines = [
    'Content-Type: multipart/mixed; boundary="inner"',
    '',
    '--inner',
    'Content-Type: text/plain',
    '',
    'The signed invoice is attached.',
    '--inner',
    'Content-Type: application/pdf; name="invoice.pdf"',
    'Content-Disposition: attachment; filename="invoice.pdf"',
    'Content-Transfer-Encoding: base64',
    '',
    ...(pdf.toString('base64').match(/.{1,76}/g) ?? []),
    '--inner--',
    '',
  ];
  return Buffer.from(lines.join('\r\n'));
}

/** A message's body as one base64 blob: the DER of an opaque S/MIME message. */
function derOf(message: Buffer): { head: string; der: Buffer } {
  const text = message.toString('latin1');
  const split = text.search(/\r?\n\r?\n/);
  return { head: text.slice(0, split), der: Buffer.from(text.slice(split), 'base64') };
}

describe('S/MIME mail', () => {
  let harness: Harness;
  let dir: string;
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  /** `openssl smime` over the invoice entity, with the headers a client writes (recipient certificates last). */
  const smime = (args: string[], recipients: string[] = []) => {
    writeFileSync(join(dir, 'entity.txt'), entity(invoice));
    openssl(
      'smime',
      ...args,
      '-in',
      'entity.txt',
      '-out',
      'message.eml',
      '-from',
      'Ann <ann@acme.example>',
      '-to',
      to,
      '-subject',
      'Invoice',
      ...recipients,
    );
    return readFileSync(join(dir, 'message.eml'));
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'smime-'));
    openssl(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'key.pem',
      '-out',
      'cert.pem',
      '-days',
      '2',
      '-subj',
      '/CN=Ann Sender/emailAddress=ann@acme.example',
    );
    openssl(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'ingest-key.pem',
      '-out',
      'ingest-cert.pem',
      '-days',
      '2',
      '-subj',
      `/CN=Ingest/emailAddress=${secure}`,
      '-addext',
      'subjectKeyIdentifier=hash',
    );
    harness = await startHarness({
      workspaces: [
        { identifier: 'ws-docs', ingestEmail: to },
        {
          identifier: 'ws-secure',
          ingestEmail: secure,
          smime: { key: join(dir, 'ingest-key.pem'), cert: join(dir, 'ingest-cert.pem') },
        },
        {
          identifier: 'ws-broken',
          ingestEmail: broken,
          smime: { key: join(dir, 'missing-key.pem'), cert: join(dir, 'ingest-cert.pem') },
        },
      ],
    });
  });
  afterAll(async () => {
    await harness?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function accepted(message: Buffer, recipients: string[] = [to]): Promise<MessageRecord> {
    const { data } = await deliver(harness.smtpPort, { to: recipients, message });
    const id = queuedId(data);
    const queued = (await harness.record(id)).attachments.filter((entry) => entry.workspace !== null);
    await Promise.all(queued.map((entry) => harness.settled(id, entry.entry)));
    return harness.record(id);
  }

  function uploads(record: MessageRecord) {
    return record.attachments
      .filter((entry) => entry.workspace !== null)
      .map((entry) => {
        const upload = harness.mock.uploads.find(
          (each) => each.documentIdentifier === entry.documentIdentifier,
        );
        return [entry.path, upload?.file?.fileName, upload?.file?.sha256];
      });
  }

  const skipped = (record: MessageRecord) =>
    record.attachments
      .filter((entry) => entry.state === 'skipped')
      .map((entry) => [entry.path, entry.reason]);

  /** `openssl smime -encrypt` of the invoice entity for the gateway's certificate. */
  const smimeEncrypt = (args: string[]) => {
    openssl(
      'smime',
      '-encrypt',
      ...args,
      '-in',
      'entity.txt',
      '-out',
      'message.eml',
      '-from',
      'Ann <ann@acme.example>',
      '-to',
      secure,
      '-subject',
      'Invoice',
      'ingest-cert.pem',
    );
    return readFileSync(join(dir, 'message.eml'));
  };

  /** `openssl cms -encrypt` of `input` for the gateway's certificate, as an e-mail (S/MIME headers). */
  const cmsEncrypt = (input: string, args: string[]) => {
    openssl(
      'cms',
      '-encrypt',
      '-in',
      input,
      '-out',
      'message.eml',
      '-from',
      'Ann <ann@acme.example>',
      '-to',
      secure,
      '-subject',
      'Invoice',
      '-recip',
      'ingest-cert.pem',
      // After -recip: -keyopt applies to the recipient before it.
      ...args,
    );
    return readFileSync(join(dir, 'message.eml'));
  };

  it('opens opaque signed data (smime.p7m): the PDF inside is uploaded and the valid signature recorded', async () => {
    const message = smime(['-sign', '-nodetach', '-signer', 'cert.pem', '-inkey', 'key.pem']);
    expect(message.toString('latin1')).toContain('smime-type=signed-data');
    const record = await accepted(message);
    expect(uploads(record)).toEqual([
      ['part 1 > smime.p7m > part 1.2 > invoice.pdf', 'invoice.pdf', sha256(invoice)],
    ]);
    expect(record.smime).toEqual({ signed: true, signature: 'valid', signer: 'ann@acme.example' });
  });

  it('takes signed data whose content was changed after signing, and records the signature invalid', async () => {
    const { head, der } = derOf(smime(['-sign', '-nodetach', '-signer', 'cert.pem', '-inkey', 'key.pem']));
    const at = der.indexOf('The signed invoice');
    expect(at).toBeGreaterThan(0);
    der[at] = 't'.charCodeAt(0);
    const tampered = Buffer.from(
      `${head}\r\n\r\n${der
        .toString('base64')
        .match(/.{1,64}/g)
        ?.join('\r\n')}\r\n`,
    );
    const record = await accepted(tampered);
    expect(uploads(record)).toEqual([
      ['part 1 > smime.p7m > part 1.2 > invoice.pdf', 'invoice.pdf', sha256(invoice)],
    ]);
    expect(record.smime).toEqual({ signed: true, signature: 'invalid', signer: 'ann@acme.example' });
  });

  it('walks the first part of clear-signed mail (multipart/signed); the .p7s is not a document', async () => {
    const message = smime(['-sign', '-signer', 'cert.pem', '-inkey', 'key.pem']);
    expect(message.toString('latin1')).toContain('multipart/signed');
    const record = await accepted(message);
    expect(uploads(record)).toEqual([['part 1.2 > invoice.pdf', 'invoice.pdf', sha256(invoice)]]);
    expect(
      record.attachments
        .filter((entry) => entry.state === 'skipped')
        .map((entry) => [entry.path, entry.reason]),
    ).toEqual([['part 2 > smime.p7s', 'the signature of a signed message (S/MIME), not a document']]);
    expect(record.smime).toEqual({ signed: true, signature: 'unverified' });
  });

  it('records a signature it cannot check (no signer certificate in the message) as unverified', async () => {
    const message = smime(['-sign', '-nodetach', '-nocerts', '-signer', 'cert.pem', '-inkey', 'key.pem']);
    const record = await accepted(message);
    expect(uploads(record)).toEqual([
      ['part 1 > smime.p7m > part 1.2 > invoice.pdf', 'invoice.pdf', sha256(invoice)],
    ]);
    expect(record.smime).toEqual({ signed: true, signature: 'unverified' });
  });

  it('skips an encrypted S/MIME part (encrypted_smime) and takes the invoice beside it', async () => {
    writeFileSync(join(dir, 'entity.txt'), entity(invoice));
    openssl('cms', '-encrypt', '-in', 'entity.txt', '-outform', 'DER', '-out', 'enveloped.der', 'cert.pem');
    const beside = uniquePdf('smime: beside the encrypted part');
    const message = multipartMessage(
      [
        [
          'smime.p7m',
          'application/pkcs7-mime; smime-type=enveloped-data',
          readFileSync(join(dir, 'enveloped.der')),
        ],
        ['beside.pdf', 'application/pdf', beside],
      ],
      { to },
    );
    const record = await accepted(message);
    expect(uploads(record)).toEqual([['part 3 > beside.pdf', 'beside.pdf', sha256(beside)]]);
    expect(
      record.attachments
        .filter((entry) => entry.state === 'skipped')
        .map((entry) => [entry.path, entry.reason]),
    ).toEqual([
      [
        'part 2 > smime.p7m',
        'encrypted_smime: encrypted mail (S/MIME), which this server cannot decrypt: no workspace it is addressed to has an S/MIME key (smime)',
      ],
    ]);
    expect(record.smime).toBeUndefined();
  });

  it('refuses encrypted mail it cannot decrypt with 550 5.6.0 that says it is encrypted', async () => {
    const message = smime(['-encrypt'], ['cert.pem']);
    expect(message.toString('latin1')).toContain('smime-type=enveloped-data');
    const { data } = await deliver(harness.smtpPort, { to: [to], message });
    expect(data?.text).toBe(
      '550 5.6.0 no supported attachment: the message is encrypted (S/MIME) and this server cannot decrypt it; found 1 part: smime.p7m (encrypted S/MIME)',
    );
  });

  describe('decrypted with the key of the workspace it is sent to', () => {
    // Key transport and content encryption as Outlook, Thunderbird and OpenSSL write them:
    // RSA PKCS #1 v1.5 or OAEP, AES-CBC, 3DES, and AES-GCM (authEnveloped-data, RFC 5083); the
    // recipient named by issuer and serial number, or by subject key identifier (-keyid).
    it.each([
      ['openssl smime, AES-256-CBC', 'smime', ['-aes256']],
      ['openssl smime, 3DES', 'smime', ['-des3']],
      [
        'openssl cms, AES-128-CBC, RSAES-OAEP with SHA-256',
        'cms',
        ['-aes128', '-keyopt', 'rsa_padding_mode:oaep', '-keyopt', 'rsa_oaep_md:sha256'],
      ],
      ['openssl cms, AES-256-GCM (authEnveloped-data)', 'cms', ['-aes-256-gcm']],
      ['openssl cms, recipient by subject key identifier', 'cms', ['-aes256', '-keyid']],
    ])(
      '%s: the invoice inside is uploaded byte for byte, its path showing the p7m',
      async (_name, tool, args) => {
        writeFileSync(join(dir, 'entity.txt'), entity(invoice));
        const message = tool === 'smime' ? smimeEncrypt(args) : cmsEncrypt('entity.txt', args);
        const gcm = args.includes('-aes-256-gcm');
        expect(message.toString('latin1')).toContain(
          gcm ? 'smime-type=authEnveloped-data' : 'smime-type=enveloped-data',
        );
        const record = await accepted(message, [secure]);
        expect(uploads(record)).toEqual([
          ['part 1 > smime.p7m > part 1.2 > invoice.pdf', 'invoice.pdf', sha256(invoice)],
        ]);
        expect(skipped(record)).toEqual([]);
        expect(record.smime).toBeUndefined();
      },
    );

    it("opens signed-then-encrypted mail (Outlook's order): the invoice is uploaded, the signature recorded", async () => {
      writeFileSync(join(dir, 'entity.txt'), entity(invoice));
      openssl(
        'smime',
        '-sign',
        '-nodetach',
        '-signer',
        'cert.pem',
        '-inkey',
        'key.pem',
        '-in',
        'entity.txt',
        '-out',
        'signed.eml',
      );
      const record = await accepted(cmsEncrypt('signed.eml', ['-aes256']), [secure]);
      expect(uploads(record)).toEqual([
        [
          'part 1 > smime.p7m > part 1.1 > smime.p7m > part 1.1.2 > invoice.pdf',
          'invoice.pdf',
          sha256(invoice),
        ],
      ]);
      expect(record.smime).toEqual({ signed: true, signature: 'valid', signer: 'ann@acme.example' });
    });

    it('opens encrypted-then-signed mail: the invoice is uploaded, the signature recorded', async () => {
      writeFileSync(join(dir, 'entity.txt'), entity(invoice));
      openssl(
        'smime',
        '-encrypt',
        '-aes256',
        '-in',
        'entity.txt',
        '-out',
        'encrypted.eml',
        'ingest-cert.pem',
      );
      openssl(
        'smime',
        '-sign',
        '-nodetach',
        '-signer',
        'cert.pem',
        '-inkey',
        'key.pem',
        '-in',
        'encrypted.eml',
        '-out',
        'message.eml',
        '-from',
        'Ann <ann@acme.example>',
        '-to',
        secure,
        '-subject',
        'Invoice',
      );
      const record = await accepted(readFileSync(join(dir, 'message.eml')), [secure]);
      expect(uploads(record)).toEqual([
        [
          'part 1 > smime.p7m > part 1.1 > smime.p7m > part 1.1.2 > invoice.pdf',
          'invoice.pdf',
          sha256(invoice),
        ],
      ]);
      expect(record.smime).toEqual({ signed: true, signature: 'valid', signer: 'ann@acme.example' });
    });

    it('gives the decrypted invoice only to the workspace whose key opened it', async () => {
      writeFileSync(join(dir, 'entity.txt'), entity(invoice));
      const beside = uniquePdf('smime: beside the encrypted part, for both');
      openssl(
        'cms',
        '-encrypt',
        '-aes256',
        '-in',
        'entity.txt',
        '-outform',
        'DER',
        '-out',
        'enveloped.der',
        'ingest-cert.pem',
      );
      const message = multipartMessage(
        [
          [
            'smime.p7m',
            'application/pkcs7-mime; smime-type=enveloped-data',
            readFileSync(join(dir, 'enveloped.der')),
          ],
          ['beside.pdf', 'application/pdf', beside],
        ],
        { to: `${to}, ${secure}` },
      );
      const record = await accepted(message, [to, secure]);
      const byWorkspace = record.attachments
        .filter((entry) => entry.workspace !== null)
        .map((entry) => [entry.workspace, entry.path]);
      expect(byWorkspace).toEqual(
        expect.arrayContaining([
          ['ws-secure', 'part 2 > smime.p7m > part 2.2 > invoice.pdf'],
          ['ws-secure', 'part 3 > beside.pdf'],
          ['ws-docs', 'part 3 > beside.pdf'],
        ]),
      );
      expect(byWorkspace).toHaveLength(3);
    });

    it('skips mail encrypted for another certificate with a reason that says so, and refuses it when nothing else is there', async () => {
      writeFileSync(join(dir, 'entity.txt'), entity(invoice));
      openssl('cms', '-encrypt', '-in', 'entity.txt', '-outform', 'DER', '-out', 'enveloped.der', 'cert.pem');
      const beside = uniquePdf('smime: beside mail for another certificate');
      const message = multipartMessage(
        [
          [
            'smime.p7m',
            'application/pkcs7-mime; smime-type=enveloped-data',
            readFileSync(join(dir, 'enveloped.der')),
          ],
          ['beside.pdf', 'application/pdf', beside],
        ],
        { to: secure },
      );
      const record = await accepted(message, [secure]);
      expect(uploads(record)).toEqual([['part 3 > beside.pdf', 'beside.pdf', sha256(beside)]]);
      expect(skipped(record)).toEqual([
        [
          'part 2 > smime.p7m',
          'encrypted_smime: encrypted mail (S/MIME), it is encrypted for another certificate than the S/MIME certificate configured (smime.cert)',
        ],
      ]);

      const alone = smime(['-encrypt'], ['cert.pem']);
      const { data } = await deliver(harness.smtpPort, { to: [secure], message: alone });
      expect(data?.text).toBe(
        '550 5.6.0 no supported attachment: the message is encrypted (S/MIME) and this server cannot decrypt it; found 1 part: smime.p7m (encrypted S/MIME)',
      );
    });

    it('skips encrypted mail when the workspace key file cannot be read, naming the file and not failing the message', async () => {
      writeFileSync(join(dir, 'entity.txt'), entity(invoice));
      openssl(
        'cms',
        '-encrypt',
        '-in',
        'entity.txt',
        '-outform',
        'DER',
        '-out',
        'enveloped.der',
        'ingest-cert.pem',
      );
      const beside = uniquePdf('smime: beside mail for a missing key');
      const message = multipartMessage(
        [
          [
            'smime.p7m',
            'application/pkcs7-mime; smime-type=enveloped-data',
            readFileSync(join(dir, 'enveloped.der')),
          ],
          ['beside.pdf', 'application/pdf', beside],
        ],
        { to: broken },
      );
      const record = await accepted(message, [broken]);
      expect(uploads(record)).toEqual([['part 3 > beside.pdf', 'beside.pdf', sha256(beside)]]);
      expect(skipped(record)).toEqual([
        [
          'part 2 > smime.p7m',
          `encrypted_smime: encrypted mail (S/MIME), the S/MIME key cannot be used: smime.key ${join(dir, 'missing-key.pem')} cannot be read (ENOENT) (workspace ws-broken)`,
        ],
      ]);
    });
  });

  it('warns at the start about a workspace whose S/MIME key cannot be used, and never logs a key', () => {
    const warning = harness.logs.lines.find((line) => line.includes('S/MIME keys that cannot be used'));
    expect(warning).toContain(
      `smime.key ${join(dir, 'missing-key.pem')} cannot be read (ENOENT) (workspace ws-broken)`,
    );
    // After every message above was decrypted with it: no line holds the key or any part of it.
    const key = readFileSync(join(dir, 'ingest-key.pem'), 'latin1');
    const keyLines = key.split('\n').filter((line) => line.length > 40);
    expect(harness.logs.lines.some((line) => line.includes('PRIVATE KEY'))).toBe(false);
    expect(harness.logs.lines.some((line) => keyLines.some((keyLine) => line.includes(keyLine)))).toBe(false);
  });
});
