import { type Job, Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFakeDns } from '../../harness/dns-fake.ts';
import { type Harness, startHarness } from '../../harness/gateway-harness.ts';
import { until } from '../../harness/http-state.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { type NoticeRelay, type RelayedMessage, startNoticeRelay } from '../../harness/notice-relay.ts';
import { deliver, queuedId } from '../../harness/smtp-session.ts';
import { type NoticeJobData, noticeJobId, noticeQueueName } from '../../src/queue/notice-queue.ts';
import { createKeySpace } from '../../src/record/keys.ts';

const relayUser = 'notice-sender';
const relayPassword = 'relay-password-7c1e9a04';

/**
 * Notices to senders (README, "Notices to senders") through a real SMTP server as the relay, with
 * real Redis and the mock parsing API: what a supplier is told, when, and when not.
 */
describe('notices to senders', () => {
  let harness: Harness;
  let relay: NoticeRelay;
  let notices: Queue<NoticeJobData>;

  beforeAll(async () => {
    relay = await startNoticeRelay({ user: relayUser, password: relayPassword });
    // supplier-four.example lets the test's loopback client send for it (SPF).
    const dns = createFakeDns({ 'TXT supplier-four.example': ['v=spf1 ip4:127.0.0.1 -all'] });
    harness = await startHarness({
      resolver: dns.resolver,
      notices: {
        smtp: `smtp://${relayUser}:${relayPassword}@127.0.0.1:${relay.port}`,
        from: 'Document intake <no-reply@ingest.test>',
        retryBaseDelay: 100,
        retryMaxDelay: 200,
      },
      workspaces: [
        { identifier: 'ws-receipts', ingestEmail: 'documents@ingest.test', notifySender: 'always' },
        {
          identifier: 'ws-invoices',
          ingestEmail: 'invoices@ingest.test',
          upload: { wait: true, rejectDuplicates: true },
          notifySender: 'onProblem',
        },
        {
          identifier: 'ws-listed',
          ingestEmail: 'listed@ingest.test',
          whitelistIngestAddresses: ['*@acme.example'],
          unlistedSenders: 'hold',
          notifySender: 'always',
        },
        {
          identifier: 'ws-vetted',
          ingestEmail: 'vetted@ingest.test',
          whitelistIngestAddresses: ['*@acme.example'],
          senderAuthentication: 'aligned',
          unlistedSenders: 'hold',
          notifySender: 'onProblem',
        },
      ],
    });
    notices = new Queue<NoticeJobData>(noticeQueueName, {
      connection: { host: '127.0.0.1', port: harness.redis.port },
      prefix: createKeySpace(harness.config.redis.prefix).queuePrefix,
    });
  });
  afterAll(async () => {
    await notices?.close();
    await harness?.close();
    await relay?.close();
  });

  async function send(
    from: string,
    to: string,
    files: [string, Buffer][],
    headers: Record<string, string> = {},
  ): Promise<string> {
    const message = await composeMessage({
      from,
      to,
      subject: `Invoices from ${from}`,
      headers,
      attachments: files.map(([filename, content]) => ({ filename, content })),
    });
    const { data } = await deliver(harness.smtpPort, { from, to: [to], message });
    return queuedId(data);
  }

  /** The notice job of a message once it has finished, with what it came to. */
  async function finishedNotice(messageId: string): Promise<Job<NoticeJobData>> {
    return until(
      `the notice job of ${messageId} to finish`,
      async () => (await notices.getJob(noticeJobId(messageId))) ?? null,
      (job) => job !== null && job.finishedOn !== undefined,
    ) as Promise<Job<NoticeJobData>>;
  }

  const to = (address: string) => (message: RelayedMessage) => message.rcptTo.includes(address);

  it('tells the sender of one uploaded and one rejected document both outcomes in one notice', async () => {
    const sender = 'ap@supplier-one.example';
    const known = uniquePdf('notice-known');
    const first = await send(sender, 'invoices@ingest.test', [['invoice-1001.pdf', known]]);
    expect(await harness.settled(first, 0)).toBe('completed');
    // onProblem, and every document was taken: no notice, not even a job for one.
    expect(await notices.getJob(noticeJobId(first))).toBeUndefined();

    const second = await send(sender, 'invoices@ingest.test', [
      ['invoice-1001-again.pdf', known],
      ['invoice-1002.pdf', uniquePdf('notice-fresh')],
    ]);
    await Promise.all([harness.settled(second, 0), harness.settled(second, 1)]);
    const record = await harness.record(second);
    expect(record.attachments.map((entry) => entry.state).sort()).toEqual(['rejected', 'uploaded']);

    const notice = await relay.waitFor(to(sender));
    expect((await finishedNotice(second)).returnvalue).toBe('sent');
    // The null sender (RFC 3834 section 3.3): a bounce of the notice goes nowhere.
    expect(notice.mailFrom).toBe('');
    expect(notice.rcptTo).toEqual([sender]);
    expect(notice.raw).toMatch(/^Auto-Submitted: auto-replied\r$/m);
    expect(notice.raw).toMatch(/^From: Document intake <no-reply@ingest\.test>\r$/m);
    expect(notice.raw).toMatch(/^To: ap@supplier-one\.example\r$/m);
    expect(notice.raw).toMatch(/^Subject: Not all documents could be processed: Invoices from/m);
    expect(notice.raw).toContain(`In-Reply-To: <${record.messageId}>`);
    // The same Message-ID on every attempt: a notice the relay took twice reads as one.
    expect(notice.raw).toContain(`Message-ID: <notice-${second}@ingest.test>`);
    const body = notice.raw.replace(/=\r\n/g, '');
    expect(body).toContain(
      'invoice-1001-again.pdf: not processed: the same document was already received before (a duplicate).',
    );
    expect(body).toContain('invoice-1002.pdf: received and passed on for processing.');
    expect(body).toContain(`Reference: ${second}`);
    expect(relay.messages.filter(to(sender))).toHaveLength(1);
  });

  it('sends a receipt under always, and nothing in answer to mail that was itself automatic', async () => {
    const sender = 'billing@supplier-two.example';
    const receipt = await send(sender, 'documents@ingest.test', [['statement.pdf', uniquePdf('receipt')]]);
    expect(await harness.settled(receipt, 0)).toBe('completed');
    const notice = await relay.waitFor(to(sender));
    expect(notice.raw).toMatch(/^Subject: Documents received: /m);

    const robot = 'robot@supplier-two.example';
    const automatic = await send(robot, 'documents@ingest.test', [['auto.pdf', uniquePdf('auto')]], {
      'Auto-Submitted': 'auto-generated',
    });
    const bulk = await send(robot, 'documents@ingest.test', [['bulk.pdf', uniquePdf('bulk')]], {
      Precedence: 'bulk',
    });
    const list = await send(robot, 'documents@ingest.test', [['list.pdf', uniquePdf('list')]], {
      'List-Id': 'Invoices <invoices.supplier-two.example>',
    });
    expect((await finishedNotice(automatic)).returnvalue).toBe('auto_submitted');
    expect((await finishedNotice(bulk)).returnvalue).toBe('bulk_precedence');
    expect((await finishedNotice(list)).returnvalue).toBe('mailing_list');
    expect(relay.messages.filter(to(robot))).toEqual([]);
  });

  it('tells no unauthenticated sender that its mail is held (no backscatter)', async () => {
    const sender = 'someone@unlisted.example';
    const held = await send(sender, 'listed@ingest.test', [['held.pdf', uniquePdf('held')]]);
    expect((await harness.record(held)).state).toBe('held');
    expect((await finishedNotice(held)).returnvalue).toBe('unauthenticated_sender');
    expect(relay.messages.filter(to(sender))).toEqual([]);
  });

  it('tells an authenticated sender at hold time that its mail waits for review', async () => {
    const sender = 'ap@supplier-four.example';
    const held = await send(sender, 'vetted@ingest.test', [['new-supplier.pdf', uniquePdf('vetted')]]);
    const record = await harness.record(held);
    expect(record).toMatchObject({ state: 'held', hold: { reason: 'sender_not_listed' } });
    const notice = await relay.waitFor(to(sender));
    expect(notice.raw).toMatch(/^Subject: Held for review: /m);
    expect(notice.raw.replace(/=\r\n/g, '')).toContain('new-supplier.pdf: waiting for review.');
    expect(notice.raw).toMatch(/^Auto-Submitted: auto-replied\r$/m);
  });

  it('keeps a notice while the relay is down and delivers it once the relay is back', async () => {
    const sender = 'ap@supplier-three.example';
    await relay.stop();
    const id = await send(sender, 'documents@ingest.test', [['late.pdf', uniquePdf('relay-down')]]);
    expect(await harness.settled(id, 0)).toBe('completed');
    await until(
      'a failed attempt to reach the relay',
      async () => (await notices.getJob(noticeJobId(id)))?.attemptsMade ?? 0,
      (attempts) => attempts >= 1,
    );
    await relay.start();
    const notice = await relay.waitFor(to(sender));
    expect(notice.raw).toContain('late.pdf: received and passed on for processing.');
    expect(relay.messages.filter(to(sender))).toHaveLength(1);
    const metrics = await (await fetch(`${harness.httpUrl}/metrics`)).text();
    expect(metrics).toMatch(/ingest_gateway_sender_notices_total\{outcome="retry"\} [1-9]/);
    expect(metrics).toMatch(/ingest_gateway_sender_notices_total\{outcome="sent"\} [1-9]/);
    expect(metrics).toMatch(/ingest_gateway_sender_notices_total\{outcome="suppressed"\} [1-9]/);
  });

  it('logs in to the relay and never writes its password to the log', () => {
    expect(relay.logins).toContain(relayUser);
    expect(harness.logs.lines.join('\n')).not.toContain(relayPassword);
  });
});
