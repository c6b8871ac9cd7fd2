import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, LogSink, startHarness } from '../../harness/gateway-harness.ts';
import { getJson } from '../../harness/http-state.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { startRedis, type TestRedis } from '../../harness/redis-server.ts';
import { deliver, SmtpSession } from '../../harness/smtp-session.ts';
import { createLogger } from '../../src/logger.ts';
import { createKeySpace } from '../../src/record/keys.ts';
import {
  createRefusalLog,
  createRefusalReader,
  MAX_PENDING,
  type RefusalEntry,
} from '../../src/record/refusal-log.ts';

interface Page {
  refusals: RefusalEntry[];
  nextCursor: string | null;
}

/**
 * The refusal log on a real gateway: each refusal SMTP sends (RCPT, MAIL, DATA) is in GET
 * /v1/refusals with the client, HELO, envelope, header From and the reply, searchable by
 * sender, recipient, stage and time, paged by cursor; and the log stays within its bound.
 */
describe('refusal log', () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startHarness();
  }, 60_000);
  afterAll(async () => {
    await harness?.close();
  });

  async function refusals(query = ''): Promise<Page> {
    const { status, body } = await getJson<Page>(`${harness.httpUrl}/v1/refusals?${query}`);
    expect(status, query).toBe(200);
    if (!body) throw new Error('no body');
    return body;
  }

  /** Polls until the log holds `count` entries matching the query: additions are not awaited by SMTP. */
  async function waitFor(query: string, count: number): Promise<RefusalEntry[]> {
    await expect.poll(async () => (await refusals(query)).refusals.length).toBe(count);
    return (await refusals(query)).refusals;
  }

  it('records an unknown recipient at RCPT with the client, HELO and envelope sender', async () => {
    const since = new Date().toISOString();
    const { rcpt } = await deliver(harness.smtpPort, {
      from: 'supplier@vendor.example',
      to: ['nobody@ingest.test'],
      message: 'Subject: x\r\n\r\nx\r\n',
    });
    expect(rcpt[0]?.code).toBe(550);
    const [entry] = await waitFor(`to=nobody@ingest.test&since=${since}`, 1);
    expect(entry).toMatchObject({
      stage: 'rcpt',
      code: 'recipient_unknown',
      reply: '550 5.1.1 <nobody@ingest.test>: no such ingest address here',
      remoteAddress: '127.0.0.1',
      helo: 'client.test',
      mailFrom: 'supplier@vendor.example',
      recipients: ['nobody@ingest.test'],
      headerFrom: null,
    });
    expect(Date.parse(entry?.at ?? '')).toBeGreaterThanOrEqual(Date.parse(since) - 1000);
  });

  it('records a message refused at DATA with its recipients and header From', async () => {
    const message = await composeMessage({
      from: 'Mallory <mallory@evil.example>',
      to: 'Invoices@Ingest.Test',
      subject: 'Invoice',
      attachments: [{ filename: 'i.pdf', content: uniquePdf('refused-at-data') }],
    });
    const { data } = await deliver(harness.smtpPort, {
      from: 'bounce@evil.example',
      to: ['Invoices@Ingest.Test'],
      message,
    });
    expect(data?.code).toBe(550);
    const [entry] = await waitFor('from=mallory@evil.example', 1);
    expect(entry).toMatchObject({
      stage: 'data',
      code: 'sender_not_admitted',
      mailFrom: 'bounce@evil.example',
      headerFrom: 'Mallory <mallory@evil.example>',
      recipients: ['Invoices@Ingest.Test'],
      helo: 'client.test',
    });
    expect(entry?.reply).toMatch(/^550 5\.7\.1 /);
    // The envelope sender finds it as well; another stage does not.
    expect((await refusals('from=bounce@evil.example&stage=data')).refusals).toHaveLength(1);
    expect((await refusals('from=bounce@evil.example&stage=rcpt')).refusals).toHaveLength(0);
  });

  it('records a refused MAIL before any recipient', async () => {
    const client = new SmtpSession(harness.smtpPort);
    try {
      await client.reply();
      await client.command('EHLO mta.vendor.example');
      const mail = await client.command('MAIL FROM:<x@vendor.example> FOO=BAR');
      expect(mail.code, mail.text).toBe(555);
    } finally {
      await client.close();
    }
    const [entry] = await waitFor('from=x@vendor.example&stage=mail', 1);
    expect(entry).toMatchObject({
      stage: 'mail',
      code: 'unknown_parameter',
      helo: 'mta.vendor.example',
      recipients: [],
    });
  });

  it('pages newest first by cursor, and answers 400 for a bad query', async () => {
    for (const n of [1, 2, 3]) {
      await deliver(harness.smtpPort, {
        from: 'pager@vendor.example',
        to: [`missing${n}@ingest.test`],
        message: 'x\r\n',
      });
    }
    await waitFor('from=pager@vendor.example', 3);
    const first = await refusals('from=pager@vendor.example&limit=2');
    expect(first.refusals.map((entry) => entry.recipients[0])).toEqual([
      'missing3@ingest.test',
      'missing2@ingest.test',
    ]);
    expect(first.nextCursor).not.toBeNull();
    const second = await refusals(`from=pager@vendor.example&limit=2&cursor=${first.nextCursor}`);
    expect(second.refusals.map((entry) => entry.recipients[0])).toEqual(['missing1@ingest.test']);
    expect(second.nextCursor).toBeNull();

    const bad = await getJson<{ problems: string[] }>(
      `${harness.httpUrl}/v1/refusals?stage=helo&cursor=zz&limit=0&nope=1`,
    );
    expect(bad.status).toBe(400);
    expect(bad.body?.problems.join('\n')).toMatch(/stage/);
    expect(bad.body?.problems.join('\n')).toMatch(/cursor/);
    expect(bad.body?.problems.join('\n')).toMatch(/unknown parameter/);
  });
});

describe('refusal log bounds', () => {
  let server: TestRedis;
  let redis: Redis;
  const keys = createKeySpace('refusal-bound-test');
  const logger = createLogger({ level: 'silent' });

  beforeAll(async () => {
    server = await startRedis();
    redis = new Redis(server.url, { maxRetriesPerRequest: 1 });
  });
  afterAll(async () => {
    redis?.disconnect();
    await server?.close();
  });

  const facts = (n: number) => ({
    stage: 'rcpt' as const,
    code: 'recipient_unknown',
    reply: '550 5.1.1 no such ingest address here',
    remoteAddress: '192.0.2.7',
    helo: 'flood.example',
    mailFrom: 'flood@flood.example',
    recipients: [`guess${n}@ingest.test`],
    headerFrom: null,
    sessionId: `s${n}`,
  });

  it('keeps about retention.maxRefusals entries under a flood, the newest ones', async () => {
    const log = createRefusalLog({ redis, keys, retentionSeconds: 3600, maxEntries: 100, logger });
    // In bursts of MAX_PENDING: past that many unanswered, an addition is dropped instead.
    for (let n = 0; n < 2000; n++) {
      log.record(facts(n));
      if (n % MAX_PENDING === MAX_PENDING - 1) await log.flushed();
    }
    await log.flushed();
    const length = await redis.xlen(keys.refusalLog);
    // MAXLEN ~ trims whole stream nodes (stream-node-max-entries, 100 by default): never a
    // node more than the bound.
    expect(length).toBeGreaterThanOrEqual(100);
    expect(length).toBeLessThanOrEqual(200);
    const read = createRefusalReader(redis, keys, 3600);
    const page = await read({ from: null, to: null, client: null, stage: null, since: null }, 1, null);
    expect(page.refusals[0]?.recipients).toEqual(['guess1999@ingest.test']);
    // The whole log expires when nothing is added for its retention.
    expect(await redis.ttl(keys.refusalLog)).toBeGreaterThan(3600);
  });

  it('drops additions past MAX_PENDING while Redis does not answer, and says how many', async () => {
    const frozenKeys = createKeySpace('refusal-frozen-test');
    const logs = new LogSink();
    const log = createRefusalLog({
      redis,
      keys: frozenKeys,
      retentionSeconds: 3600,
      maxEntries: 100_000,
      logger: createLogger({ level: 'warn', destination: logs }),
    });
    server.freeze();
    try {
      // None of these waits for Redis: record() returns at once, frozen or not.
      for (let n = 0; n < MAX_PENDING + 5; n++) log.record(facts(n));
      await logs.waitFor((line) => line.includes('refusals not written to the refusal log'));
    } finally {
      server.thaw();
    }
    await log.flushed();
    expect(await redis.xlen(frozenKeys.refusalLog)).toBe(MAX_PENDING);
    expect(JSON.parse(logs.lines[0] ?? '{}')).toMatchObject({ lost: 1 });
  });

  it('cuts long fields, and reads nothing older than retention.refusals', async () => {
    const log = createRefusalLog({ redis, keys, retentionSeconds: 3600, maxEntries: 100, logger });
    log.record({ ...facts(0), helo: 'h'.repeat(5000), recipients: Array.from({ length: 50 }, () => 'r') });
    await log.flushed();
    const read = createRefusalReader(redis, keys, 3600);
    const any = { from: null, to: null, client: null, stage: null, since: null };
    const [entry] = (await read(any, 1, null)).refusals;
    expect(entry?.helo?.length).toBe(320);
    expect(entry?.recipients).toHaveLength(10);
    // An hour and a bit later, every entry is past the retention.
    expect((await read(any, 10, null, Date.now() + 3_700_000)).refusals).toEqual([]);
  });
});
