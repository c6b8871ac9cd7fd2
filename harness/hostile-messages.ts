import { randomBytes } from 'node:crypto';
import { composeMessage, uniquePdf } from './messages.ts';

/**
 * Messages built to exhaust the MIME walk and sender authentication, each with the reply
 * the gateway gives it: one set for the tests that prove none stalls the gateway
 * (test/integration/hostile-mime.test.ts, sender-auth-hostile.test.ts) and for the benchmark
 * that reports how long each holds up its event loop (bench/hostile-stalls.ts). The replies
 * are those of harness/hostile-gateway.ts's configuration (maxPartSize 1000000, the
 * other limits at their defaults).
 */

/** Recipient of a workspace that admits any sender. */
export const OPEN_RECIPIENT = 'documents@ingest.test';
/** Recipient of a workspace whose senders must authenticate (senderAuthentication: aligned). */
export const AUTHENTICATED_RECIPIENT = 'authenticated@ingest.test';

export interface HostileMessage {
  /** What makes it hostile. */
  readonly name: string;
  /**
   * What it attacks: `limit`, a cap of the walk that refuses it (nothing is uploaded);
   * `walk`, a body the walk reads whole; `from`, the address parser; `sender-auth`, the walk
   * with sender authentication reading the same stream.
   */
  readonly target: 'limit' | 'walk' | 'from' | 'sender-auth';
  readonly to: string;
  /** The reply to the final dot, as a pattern (`exactly` for a whole text). */
  readonly reply: RegExp;
  build(): Buffer | Promise<Buffer>;
}

const MIB = 1024 * 1024;

/** The reply to a message that was read whole and taken. */
const queued = /^250 2\.0\.0 queued as [0-9a-z]+$/;
/** The reply to a message that was read whole and held nothing to upload. */
const onlyText = exactly('550 5.6.0 no supported attachment: found no attachment, only the message text');
const headerBlockTooLarge = exactly(
  '550 5.6.0 a MIME header block is larger than the 65536 bytes this server reads (a line counts at least 64)',
);

/** A pattern that matches `text` and nothing else. */
function exactly(text: string): RegExp {
  return new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
}

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

/** A message with a PDF whose From header is `from`. */
async function withFrom(from: string): Promise<Buffer> {
  const message = await composeMessage({
    attachments: [{ filename: 'f.pdf', content: uniquePdf(`from-${from.length}`) }],
  });
  return Buffer.from(message.toString('latin1').replace(/^From: .*$/m, `From: ${from}`), 'latin1');
}

const aimedAt =
  (target: HostileMessage['target'], to: string) =>
  (message: Omit<HostileMessage, 'target' | 'to'>): HostileMessage => ({ ...message, target, to });

const limits: HostileMessage[] = [
  {
    name: '150 tiny parts (maxParts)',
    build: () => manyParts(150),
    reply: exactly('550 5.6.0 the message has more than the 100 parts this server reads'),
  },
  {
    name: '200,000 tiny parts',
    build: () => manyParts(200_000),
    reply: exactly('550 5.6.0 the message has more than the 100 parts this server reads'),
  },
  {
    name: '10,000 nested multiparts',
    build: () => nestedMultiparts(10_000),
    reply: exactly('550 5.6.0 multiparts are nested deeper than the 32 levels this server reads'),
  },
  {
    name: 'attached messages nested 5 deep (maxMimeDepth 3)',
    build: () => nestedMessages(5),
    reply: exactly(
      '550 5.6.0 attached messages are nested more than 3 levels deep, deeper than this server reads',
    ),
  },
  {
    name: 'a header of 5 MiB without a line break',
    build: () => Buffer.from(`From: ann@acme.example\r\nSubject: ${'A'.repeat(5 * MIB)}\r\n\r\nbody\r\n`),
    reply: headerBlockTooLarge,
  },
  {
    name: 'a part header block of 1 MiB',
    build: () => oneLeaf([`X-Filler: ${'b'.repeat(MIB)}`, 'Content-Type: application/pdf'], uniquePdf('h')),
    reply: headerBlockTooLarge,
  },
  {
    // mailsplit counts each header line as at least 64 bytes: 2,000 folded lines (63 KB of
    // text) are over the cap before the file name is ever put together.
    name: 'a file name folded over 2,000 RFC 2231 continuation lines',
    build: () =>
      oneLeaf(
        ['Content-Type: application/pdf', 'Content-Transfer-Encoding: base64', rfc2231Disposition('\r\n ')],
        pdfBase64('folded'),
      ),
    reply: headerBlockTooLarge,
  },
  {
    name: 'a PDF over maxPartSize',
    build: () =>
      oneLeaf(
        ['Content-Type: application/pdf; name="big.pdf"', 'Content-Transfer-Encoding: base64'],
        Buffer.from(
          Buffer.concat([uniquePdf('big'), Buffer.alloc(1_200_000, 1)])
            .toString('base64')
            .replace(/.{76}/g, '$&\r\n'),
        ),
      ),
    reply: exactly('552 5.3.4 attachment "big.pdf" is larger than the 1 MB the parsing service accepts'),
  },
].map(aimedAt('limit', OPEN_RECIPIENT));

// Bodies are read whole (only candidates stop at maxPartSize), so these walk every byte.
const walks: HostileMessage[] = [
  {
    name: 'a boundary-less body part of 12 MiB on one line',
    build: () => oneLeaf(['Content-Type: text/plain'], Buffer.alloc(12 * MIB, 'a')),
    reply: onlyText,
  },
  {
    name: 'a multipart of 12 MiB with no boundary line at all',
    build: () =>
      Buffer.concat([Buffer.from(head('multipart/mixed; boundary="never"')), Buffer.alloc(12 * MIB, 'c')]),
    reply: onlyText,
  },
  {
    name: '8 MiB of base64 with garbage in it',
    build: () =>
      oneLeaf(['Content-Type: text/plain', 'Content-Transfer-Encoding: base64'], garbageBase64(8 * MIB)),
    reply: onlyText,
  },
  {
    name: 'an HTML body of 12 MiB of cid: references',
    build: () => oneLeaf(['Content-Type: text/html'], Buffer.from(`<img src="${'cid:'.repeat(3 * MIB)}">`)),
    reply: onlyText,
  },
  {
    name: 'an HTML body with one 12 MiB cid: URL',
    build: () => oneLeaf(['Content-Type: text/html'], Buffer.from(`<img src="cid:${'x'.repeat(12 * MIB)}">`)),
    reply: onlyText,
  },
  {
    name: 'quoted-printable of 12 MiB of soft line breaks',
    build: () =>
      oneLeaf(
        ['Content-Type: text/plain', 'Content-Transfer-Encoding: quoted-printable'],
        Buffer.from('=\r\n'.repeat(4 * MIB)),
      ),
    reply: onlyText,
  },
  {
    // On one line, so that the header block stays under the cap and the parser gets them all.
    name: 'a file name in 2,000 RFC 2231 continuations',
    build: () =>
      oneLeaf(
        ['Content-Type: application/pdf', 'Content-Transfer-Encoding: base64', rfc2231Disposition(' ')],
        pdfBase64('continuations'),
      ),
    reply: queued,
  },
  {
    name: 'a Subject of 3,000 encoded words',
    build: () =>
      Buffer.from(
        crlf(['From: ann@acme.example', `Subject: ${'=?utf-8?q?=41=42?= '.repeat(3000)}`, '', 'body']),
      ),
    reply: onlyText,
  },
].map(aimedAt('walk', OPEN_RECIPIENT));

// The address parser sees at most 64 KiB; an open workspace admits any sender, so each is taken.
const fromHeaders: Array<[name: string, from: string]> = [
  ['a From of 60 KB of nested comments', `${'('.repeat(30_000)}${')'.repeat(30_000)} ann@acme.example`],
  ['a From of 60 KB of quotes', `${'"a'.repeat(30_000)} <ann@acme.example>`],
  ['a From of 4,000 addresses', Array(4000).fill('a@acme.example').join(',')],
  ['a From of 2,000 encoded words', `${'=?utf-8?b?QUJD?= '.repeat(2000)}<ann@acme.example>`],
  ['a From of 60 KB of angle brackets', `${'<'.repeat(60_000)}ann@acme.example`],
  ['a From of 60 KB of backslashes', `"${'\\'.repeat(60_000)}" <ann@acme.example>`],
];
const froms: HostileMessage[] = fromHeaders
  .map(([name, from]) => ({ name, build: () => withFrom(from), reply: queued }))
  .map(aimedAt('from', OPEN_RECIPIENT));

const senderAuthentication: HostileMessage[] = [
  {
    // Authentication reads the DATA stream beside the walk; it must stop where the walk does.
    name: 'a header block of 24 MiB, sender authentication on',
    build: () =>
      Buffer.concat([
        Buffer.from('From: ann@acme.example\r\n'),
        Buffer.alloc(24 * MIB, 'X-A: b\r\n'),
        Buffer.from('\r\nbody\r\n'),
      ]),
    reply: headerBlockTooLarge,
  },
].map(aimedAt('sender-auth', AUTHENTICATED_RECIPIENT));

export const hostileMessages: readonly HostileMessage[] = [
  ...limits,
  ...walks,
  ...froms,
  ...senderAuthentication,
];

/** The messages that attack `target`, as `[name, message]` rows for it.each. */
export function hostileRows(target: HostileMessage['target']): Array<[string, HostileMessage]> {
  return hostileMessages
    .filter((message) => message.target === target)
    .map((message) => [message.name, message]);
}
