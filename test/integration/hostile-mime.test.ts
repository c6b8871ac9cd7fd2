import { randomBytes } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../support/gateway-harness.ts';
import { composeMessage, uniquePdf } from '../support/messages.ts';
import { RawSmtpClient } from '../support/raw-smtp-client.ts';
import type { Reply } from '../support/smtp-session.ts';

/**
 * Messages built to exhaust the MIME walk, each sent through SMTP while the event loop's
 * delay is measured: the gateway serves every session from one thread, so a step that is
 * synchronous in proportion to a hostile input stalls every other sender. A stall of
 * seconds fails the test (the one timing bound: it proves a stall cannot happen, it does
 * not measure speed). The caps refuse with the reply naming the limit; nothing is uploaded.
 */

const MIB = 1024 * 1024;
/** The most the event loop may be held up by one hostile message, in ms. */
const STALL_BOUND_MS = 2000;

const crlf = (lines: readonly string[]) => `${lines.join('\r\n')}\r\n`;
const head = (contentType: string) =>
  crlf([
    'From: Ann <ann@acme.example>',
    'Subject: hostile',
    'MIME-Version: 1.0',
    `Content-Type: ${contentType}`,
    '',
  ]);

/** `levels` multiparts, each the only part of its parent. */
function nestedMultiparts(levels: number): Buffer {
  const parts: string[] = [head('multipart/mixed; boundary="b0"')];
  for (let level = 1; level < levels; level++) {
    parts.push(`--b${level - 1}\r\nContent-Type: multipart/mixed; boundary="b${level}"\r\n\r\n`);
  }
  parts.push(`--b${levels - 1}\r\nContent-Type: text/plain\r\n\r\ndeep\r\n`);
  for (let level = levels - 1; level >= 0; level--) parts.push(`--b${level}--\r\n`);
  return Buffer.from(parts.join(''));
}

/** `count` tiny text parts. */
function manyParts(count: number): Buffer {
  const part = '--p\r\nContent-Type: text/plain\r\n\r\nx\r\n';
  return Buffer.from(`${head('multipart/mixed; boundary="p"')}${part.repeat(count)}--p--\r\n`);
}

/** Attached messages nested `levels` deep, the innermost holding a PDF. */
async function nestedMessages(levels: number): Promise<Buffer> {
  let inner = await composeMessage({ attachments: [{ filename: 'deep.pdf', content: uniquePdf('deep') }] });
  for (let level = 0; level < levels; level++) {
    inner = await composeMessage({
      attachments: [{ filename: `level${level}.eml`, content: inner, contentType: 'message/rfc822' }],
    });
  }
  return inner;
}

/** One leaf of `body`, under `headers`, in a multipart with a text body. */
function oneLeaf(headers: readonly string[], body: Buffer): Buffer {
  return Buffer.concat([
    Buffer.from(head('multipart/mixed; boundary="leaf"')),
    Buffer.from(crlf(['--leaf', 'Content-Type: text/plain', '', 'see attached', '--leaf', ...headers, ''])),
    body,
    Buffer.from('\r\n--leaf--\r\n'),
  ]);
}

/** Base64 lines of 76 characters with garbage strewn through them. */
function garbageBase64(bytes: number): Buffer {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=!*#%&?';
  const random = randomBytes(bytes);
  const text = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i++) text[i] = alphabet.charCodeAt((random[i] ?? 0) % alphabet.length);
  const lines: Buffer[] = [];
  for (let at = 0; at < bytes; at += 76) lines.push(text.subarray(at, at + 76), Buffer.from('\r\n'));
  return Buffer.concat(lines);
}

/** A Content-Disposition whose file name comes in 2,000 RFC 2231 continuations, joined by `separator`. */
function rfc2231Disposition(separator: string): string {
  const continuations = Array.from({ length: 2000 }, (_, i) => `${separator}filename*${i}*=utf-8''%41%42`);
  return `Content-Disposition: attachment;${continuations.join(';')}`;
}

/** A unique PDF as base64 lines of 76 characters. */
const pdfBase64 = (label: string) =>
  Buffer.from(uniquePdf(label).toString('base64').replace(/.{76}/g, '$&\r\n'));

/** The reply to a message that was read whole and taken. */
const queued = /^250 2\.0\.0 queued as [0-9a-z]+$/;
/** The reply to a message that was read whole and held nothing to upload. */
const onlyText = '550 5.6.0 no supported attachment: found no attachment, only the message text';

describe('hostile MIME', () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startHarness({ smtp: '  maxPartSize: 1000000' });
  });
  afterAll(async () => harness?.close());

  /**
   * Deliver `message` (dot-stuffed here) and return the reply to its final dot, while the
   * event loop's delay is recorded; fails on a stall of STALL_BOUND_MS or more.
   */
  async function deliverWatched(message: Buffer): Promise<Reply> {
    const client = new RawSmtpClient(harness.smtpPort);
    const delay = monitorEventLoopDelay({ resolution: 10 });
    try {
      await client.reply();
      await client.command('EHLO client.test');
      await client.command('MAIL FROM:<ann@acme.example>');
      await client.command('RCPT TO:<documents@ingest.test>');
      expect((await client.command('DATA')).code).toBe(354);
      delay.enable();
      const stuffed = Buffer.from(message.toString('latin1').replace(/^\./gm, '..'), 'latin1');
      await client.write(stuffed);
      await client.write(stuffed.subarray(-2).toString() === '\r\n' ? '.\r\n' : '\r\n.\r\n');
      const reply = await client.reply();
      delay.disable();
      expect(delay.max / 1e6).toBeLessThan(STALL_BOUND_MS);
      return reply;
    } finally {
      delay.disable();
      await client.close();
    }
  }

  it.each<[string, () => Promise<Buffer> | Buffer, string]>([
    [
      '150 tiny parts (maxParts)',
      () => manyParts(150),
      '550 5.6.0 the message has more than the 100 parts this server reads',
    ],
    [
      '200,000 tiny parts',
      () => manyParts(200_000),
      '550 5.6.0 the message has more than the 100 parts this server reads',
    ],
    [
      '10,000 nested multiparts',
      () => nestedMultiparts(10_000),
      '550 5.6.0 multiparts are nested deeper than the 32 levels this server reads',
    ],
    [
      'attached messages nested 5 deep (maxMimeDepth 3)',
      () => nestedMessages(5),
      '550 5.6.0 attached messages are nested more than 3 levels deep, deeper than this server reads',
    ],
    [
      'a header of 5 MiB without a line break',
      () => Buffer.from(`From: ann@acme.example\r\nSubject: ${'A'.repeat(5 * MIB)}\r\n\r\nbody\r\n`),
      '550 5.6.0 a MIME header block is larger than the 65536 bytes this server reads (a line counts at least 64)',
    ],
    [
      'a part header block of 1 MiB',
      () => oneLeaf([`X-Filler: ${'b'.repeat(MIB)}`, 'Content-Type: application/pdf'], uniquePdf('h')),
      '550 5.6.0 a MIME header block is larger than the 65536 bytes this server reads (a line counts at least 64)',
    ],
    [
      // mailsplit counts each header line as at least 64 bytes: 2,000 folded lines (63 KB of
      // text) are over the cap before the file name is ever put together.
      'a file name folded over 2,000 RFC 2231 continuation lines',
      () =>
        oneLeaf(
          ['Content-Type: application/pdf', 'Content-Transfer-Encoding: base64', rfc2231Disposition('\r\n ')],
          pdfBase64('folded'),
        ),
      '550 5.6.0 a MIME header block is larger than the 65536 bytes this server reads (a line counts at least 64)',
    ],
    [
      'a PDF over maxPartSize',
      () =>
        oneLeaf(
          ['Content-Type: application/pdf; name="big.pdf"', 'Content-Transfer-Encoding: base64'],
          Buffer.from(
            Buffer.concat([uniquePdf('big'), Buffer.alloc(1_200_000, 1)])
              .toString('base64')
              .replace(/.{76}/g, '$&\r\n'),
          ),
        ),
      '552 5.3.4 attachment "big.pdf" is larger than the 1 MB the parsing service accepts',
    ],
  ])('refuses %s with the reply naming the limit, without a stall', async (_case, build, expected) => {
    const before = harness.mock.uploads.length;
    expect((await deliverWatched(await build())).text).toBe(expected);
    expect(harness.mock.uploads.length).toBe(before);
  });

  it.each<[string, () => Buffer, string | RegExp]>([
    // Bodies are read whole (only candidates stop at maxPartSize), so these walk every byte.
    [
      'a boundary-less body part of 12 MiB on one line',
      () => oneLeaf(['Content-Type: text/plain'], Buffer.alloc(12 * MIB, 'a')),
      onlyText,
    ],
    [
      'a multipart of 12 MiB with no boundary line at all',
      () =>
        Buffer.concat([Buffer.from(head('multipart/mixed; boundary="never"')), Buffer.alloc(12 * MIB, 'c')]),
      onlyText,
    ],
    [
      '8 MiB of base64 with garbage in it',
      () =>
        oneLeaf(['Content-Type: text/plain', 'Content-Transfer-Encoding: base64'], garbageBase64(8 * MIB)),
      onlyText,
    ],
    [
      'an HTML body of 12 MiB of cid: references',
      () => oneLeaf(['Content-Type: text/html'], Buffer.from(`<img src="${'cid:'.repeat(3 * MIB)}">`)),
      onlyText,
    ],
    [
      'an HTML body with one 12 MiB cid: URL',
      () => oneLeaf(['Content-Type: text/html'], Buffer.from(`<img src="cid:${'x'.repeat(12 * MIB)}">`)),
      onlyText,
    ],
    [
      'quoted-printable of 12 MiB of soft line breaks',
      () =>
        oneLeaf(
          ['Content-Type: text/plain', 'Content-Transfer-Encoding: quoted-printable'],
          Buffer.from('=\r\n'.repeat(4 * MIB)),
        ),
      onlyText,
    ],
    [
      // On one line, so that the header block stays under the cap and the parser gets them all.
      'a file name in 2,000 RFC 2231 continuations',
      () =>
        oneLeaf(
          ['Content-Type: application/pdf', 'Content-Transfer-Encoding: base64', rfc2231Disposition(' ')],
          pdfBase64('continuations'),
        ),
      queued,
    ],
    [
      'a Subject of 3,000 encoded words',
      () =>
        Buffer.from(
          crlf(['From: ann@acme.example', `Subject: ${'=?utf-8?q?=41=42?= '.repeat(3000)}`, '', 'body']),
        ),
      onlyText,
    ],
  ])('parses %s without a stall', async (_case, build, expected) => {
    const reply = await deliverWatched(build());
    if (typeof expected === 'string') expect(reply.text).toBe(expected);
    else expect(reply.text).toMatch(expected);
  });

  it.each<[string, string]>([
    ['a From of 60 KB of nested comments', `${'('.repeat(30_000)}${')'.repeat(30_000)} ann@acme.example`],
    ['a From of 60 KB of quotes', `${'"a'.repeat(30_000)} <ann@acme.example>`],
    ['a From of 4,000 addresses', Array(4000).fill('a@acme.example').join(',')],
    ['a From of 2,000 encoded words', `${'=?utf-8?b?QUJD?= '.repeat(2000)}<ann@acme.example>`],
    ['a From of 60 KB of angle brackets', `${'<'.repeat(60_000)}ann@acme.example`],
    ['a From of 60 KB of backslashes', `"${'\\'.repeat(60_000)}" <ann@acme.example>`],
  ])('reads %s without a stall (the address parser sees at most 64 KiB)', async (_case, from) => {
    const message = await composeMessage({
      attachments: [{ filename: 'f.pdf', content: uniquePdf(`from-${from.length}`) }],
    });
    const hostile = Buffer.from(message.toString('latin1').replace(/^From: .*$/m, `From: ${from}`), 'latin1');
    const reply = await deliverWatched(hostile);
    // An open workspace admits any sender; the hostile header only has to be read in time.
    expect(reply.text).toMatch(queued);
  });
});
