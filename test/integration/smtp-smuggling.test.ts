import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import type { Reply } from '../../harness/smtp-session.ts';
import { SmtpSession } from '../../harness/smtp-session.ts';

/**
 * SMTP smuggling (SEC Consult, 2023): a message body holding an end-of-data look-alike
 * followed by a whole second transaction. Only CRLF.CRLF ends DATA; a bare CR or LF is
 * refused. Every attack is sent over a raw socket, the final CRLF.CRLF in a TCP segment of
 * its own, and the smuggled transaction carries a PDF for an open workspace, so that a
 * smuggled message that got through would show as an upload.
 */

const smuggledTransaction = async (label: string) =>
  Buffer.concat([
    Buffer.from('MAIL FROM:<mallory@evil.test>\r\nRCPT TO:<documents@ingest.test>\r\nDATA\r\n'),
    await composeMessage({
      from: 'mallory@evil.test',
      subject: `smuggled ${label}`,
      attachments: [{ filename: 'smuggled.pdf', content: uniquePdf(`smuggled-${label}`) }],
    }),
  ]);

/**
 * DATA with `segments`, each in a TCP segment of its own, then the final CRLF.CRLF in the
 * next; every reply from DATA's on, QUIT's included, until the server hangs up. A smuggled
 * transaction that the server read as commands would add its replies (250, 250, 354, …).
 */
async function sendAttack(port: number, segments: readonly (string | Buffer)[]): Promise<Reply[]> {
  const client = new SmtpSession(port);
  try {
    await client.reply();
    await client.command('EHLO client.test');
    expect((await client.command('MAIL FROM:<ann@acme.example>')).code).toBe(250);
    expect((await client.command('RCPT TO:<documents@ingest.test>')).code).toBe(250);
    expect((await client.command('DATA')).code).toBe(354);
    for (const segment of segments) await client.write(segment);
    await client.write('\r\n.\r\n');
    const replies = [await client.reply()];
    await client.write('QUIT\r\n');
    replies.push(...(await client.rest()));
    return replies;
  } finally {
    await client.close();
  }
}

const bareLf = '550 5.6.0 message refused: bare LF in DATA; lines must end with CRLF (RFC 5321 2.3.8)';
const bareCr = '550 5.6.0 message refused: bare CR in DATA; lines must end with CRLF (RFC 5321 2.3.8)';
/** The whole attack read as one text/plain message: the smuggled PDF is body text, not a part. */
const nothingUsable = '550 5.6.0 no supported attachment: found no attachment, only the message text';

/**
 * The attack was one transaction, refused with `reply`, and nothing of it was taken: the
 * gateway logged one DATA outcome since log line `from` (the session's first transaction,
 * refused), no message record exists (one is written before any 250), and the mock API got
 * no upload.
 */
async function expectOneRefusal(harness: Harness, redis: Redis, from: number, reply: string) {
  const outcomes = harness.logs.lines
    .slice(from)
    .filter((line) => /"msg":"message (?:refused|accepted)"/.test(line));
  expect(outcomes).toHaveLength(1);
  expect(outcomes[0]).toContain('"transaction":1,');
  expect(outcomes[0]).toContain(`"reply":${JSON.stringify(reply)}`);
  expect(outcomes[0]).toContain('"msg":"message refused"');
  expect(await redis.keys(`${harness.config.redis.prefix}:*:record`)).toEqual([]);
  expect(harness.mock.uploads).toEqual([]);
}

describe('SMTP smuggling', () => {
  let harness: Harness;
  let redis: Redis;

  beforeAll(async () => {
    harness = await startHarness();
    redis = new Redis(harness.redis.url);
  });
  afterAll(async () => {
    redis?.disconnect();
    await harness?.close();
  });

  it.each([
    ['<LF>.<LF>', '\n.\n', bareLf],
    ['<LF>.<CR><LF>', '\n.\r\n', bareLf],
    ['<CR><LF>.<LF>', '\r\n.\n', bareLf],
    ['<CR>.<CR>', '\r.\r', bareCr],
  ])('refuses %s followed by a second transaction with one 550 5.6.0', async (_name, ending, refusal) => {
    const from = harness.logs.lines.length;
    const replies = await sendAttack(harness.smtpPort, [
      `Subject: hello\r\n\r\nhello${ending}`,
      await smuggledTransaction(ending),
    ]);
    expect(replies).toEqual([
      { code: 550, text: refusal },
      { code: 221, text: '221 Bye' },
    ]);
    await expectOneRefusal(harness, redis, from, refusal);
  });

  it('reads a dot-stuffed line in a segment of its own as content, not as the end of DATA', async () => {
    const from = harness.logs.lines.length;
    const replies = await sendAttack(harness.smtpPort, [
      'Subject: hello\r\n\r\nhello\r\n',
      '..\r\n',
      await smuggledTransaction('dot line'),
    ]);
    expect(replies).toEqual([
      { code: 550, text: nothingUsable },
      { code: 221, text: '221 Bye' },
    ]);
    await expectOneRefusal(harness, redis, from, nothingUsable);
  });

  it('reads a dot-stuffed first line in a segment of its own as content (smtp-server >= 3.19.3)', async () => {
    const from = harness.logs.lines.length;
    const replies = await sendAttack(harness.smtpPort, [
      '..\r\n',
      Buffer.concat([Buffer.from('\r\n'), await smuggledTransaction('first dot line')]),
    ]);
    expect(replies).toEqual([
      { code: 550, text: nothingUsable },
      { code: 221, text: '221 Bye' },
    ]);
    await expectOneRefusal(harness, redis, from, nothingUsable);
  });
});

describe('SMTP smuggling with smtp.rejectBareLineEndings: false', () => {
  let harness: Harness;
  let redis: Redis;

  beforeAll(async () => {
    harness = await startHarness({ smtp: { rejectBareLineEndings: false } });
    redis = new Redis(harness.redis.url);
  });
  afterAll(async () => {
    redis?.disconnect();
    await harness?.close();
  });

  it.each([
    ['<LF>.<LF>', '\n.\n'],
    ['<LF>.<CR><LF>', '\n.\r\n'],
    ['<CR><LF>.<LF>', '\r\n.\n'],
    ['<CR>.<CR>', '\r.\r'],
  ])('smtp-server still reads %s as content: one message, no second transaction', async (_name, ending) => {
    const from = harness.logs.lines.length;
    const replies = await sendAttack(harness.smtpPort, [
      `Subject: hello\r\n\r\nhello${ending}`,
      await smuggledTransaction(ending),
    ]);
    expect(replies).toEqual([
      { code: 550, text: nothingUsable },
      { code: 221, text: '221 Bye' },
    ]);
    await expectOneRefusal(harness, redis, from, nothingUsable);
  });
});
