import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { startHarness } from '../../harness/gateway-harness.ts';
import { composeMessage, uniquePdf } from '../../harness/messages.ts';
import { deliver, queuedId } from '../../harness/smtp-session.ts';
import { createKeySpace } from '../../src/record/keys.ts';

interface Readyz {
  durability: {
    aof: string;
    maxmemoryPolicy: string;
    redisVersion: string;
    waitAof: boolean;
    warnings: string[];
  };
}

const readyz = async (httpUrl: string) => (await (await fetch(`${httpUrl}/readyz`)).json()) as Readyz;

/** What a 250 is worth, said at start and in /readyz, and how long accepted mail is kept. */
describe('durability and retention', () => {
  it('refuses to start on a Redis that may evict keys, naming the setting', async () => {
    await expect(startHarness({ redisServer: { 'maxmemory-policy': 'allkeys-lru' } })).rejects.toThrow(
      /maxmemory-policy is allkeys-lru.*redis\.allowEviction/,
    );
  });

  it('starts on such a Redis when eviction is explicitly allowed, and says so in /readyz', async () => {
    const harness = await startHarness({
      redisServer: { 'maxmemory-policy': 'allkeys-lru' },
      redis: { allowEviction: true },
    });
    try {
      const readiness = await readyz(harness.httpUrl);
      expect(readiness.durability.maxmemoryPolicy).toBe('allkeys-lru');
      expect(readiness.durability.warnings).toEqual(
        expect.arrayContaining([expect.stringContaining('allowed by redis.allowEviction')]),
      );
    } finally {
      await harness.close();
    }
  });

  it('reports AOF everysec and, on a Redis without WAITAOF, that 250 does not wait for an fsync', async () => {
    const harness = await startHarness({
      redisServer: { appendonly: 'yes', appendfsync: 'everysec' },
      redis: { waitAof: true },
    });
    try {
      const { durability } = await readyz(harness.httpUrl);
      expect(durability.aof).toBe('everysec');
      if (/^7\.[01]\.|^[0-6]\./.test(durability.redisVersion)) {
        expect(durability.waitAof).toBe(false);
        expect(harness.logs.lines.some((line) => line.includes('has no WAITAOF'))).toBe(true);
      } else {
        expect(durability.waitAof).toBe(true);
      }
      // Whatever the server, the mail is still accepted.
      const message = await composeMessage({
        attachments: [{ filename: 'aof.pdf', content: uniquePdf('aof') }],
      });
      const { data } = await deliver(harness.smtpPort, { to: ['documents@ingest.test'], message });
      expect(data?.text).toMatch(/^250 2\.0\.0 queued as /);
    } finally {
      await harness.close();
    }
  });

  it('gives every key of an accepted message the configured retention', async () => {
    const harness = await startHarness({ retention: { messages: 7200 } });
    const redis = new Redis(harness.redis.url);
    try {
      const message = await composeMessage({
        attachments: [{ filename: 'ttl.pdf', content: uniquePdf('ttl') }],
      });
      const { data } = await deliver(harness.smtpPort, { to: ['documents@ingest.test'], message });
      const id = queuedId(data);
      await harness.settled(id, 0);
      const keys = createKeySpace(harness.config.redis.prefix).message(id);
      const record = await harness.record(id);
      for (const key of [keys.raw, keys.record]) {
        const ttl = await redis.ttl(key);
        expect(ttl, key).toBeGreaterThan(7000);
        expect(ttl, key).toBeLessThanOrEqual(7200);
      }
      const documentKey = createKeySpace(harness.config.redis.prefix).document(
        record.attachments[0]?.documentIdentifier ?? '',
      );
      expect(await redis.ttl(documentKey)).toBeGreaterThan(7000);
      // The document was released after its upload: nothing of the attachment stays behind.
      const sha256 = record.attachments[0]?.sha256 ?? '';
      expect(await redis.exists(keys.blob(sha256), keys.span(sha256), keys.blobRefs(sha256))).toBe(0);
      // Nothing the gateway wrote for this message lives for ever.
      const all = await redis.keys(`${harness.config.redis.prefix}:{${id}}:*`);
      for (const key of all) expect(await redis.ttl(key), key).toBeGreaterThan(0);
    } finally {
      redis.disconnect();
      await harness.close();
    }
  });

  it('gives each key a commit writes, blob or span, the retention, and writes no other', async () => {
    // smtp only: nothing is uploaded and released, so every key of the commit is still there.
    const harness = await startHarness({
      role: 'smtp',
      retention: { messages: 7200 },
      workspaces: [{ identifier: 'ws-body', ingestEmail: 'documents@ingest.test', bodyAsDocument: 'always' }],
    });
    const redis = new Redis(harness.redis.url);
    try {
      const pdf = uniquePdf('commit-ttl');
      const message = await composeMessage({
        to: 'documents@ingest.test',
        text: 'The body, taken as a document of its own.',
        attachments: [{ filename: 'span.pdf', content: pdf }],
      });
      const { data } = await deliver(harness.smtpPort, { to: ['documents@ingest.test'], message });
      const id = queuedId(data);
      const keys = createKeySpace(harness.config.redis.prefix).message(id);
      const record = await harness.record(id);
      const body = record.attachments.find((entry) => entry.detectedType === 'text/plain');
      const attached = record.attachments.find((entry) => entry.detectedType === 'application/pdf');
      if (!body || !attached)
        throw new Error(`expected a body and a PDF: ${JSON.stringify(record.attachments)}`);
      // The PDF is a span of the raw copy, the body a blob of its own: one key each, no other.
      const stored = (await redis.keys(`${harness.config.redis.prefix}:{${id}}:*`)).sort();
      expect(stored).toEqual(
        [
          keys.raw,
          keys.record,
          keys.span(attached.sha256),
          keys.blobRefs(attached.sha256),
          keys.blob(body.sha256),
          keys.blobRefs(body.sha256),
        ].sort(),
      );
      for (const key of stored) {
        const ttl = await redis.ttl(key);
        expect(ttl, key).toBeGreaterThan(7000);
        expect(ttl, key).toBeLessThanOrEqual(7200);
      }
    } finally {
      redis.disconnect();
      await harness.close();
    }
  });

  it('takes a repeated delivery whose record has expired as a new message, not as one in progress', async () => {
    const harness = await startHarness();
    const redis = new Redis(harness.redis.url);
    try {
      const message = await composeMessage({
        attachments: [{ filename: 'again.pdf', content: uniquePdf('again') }],
      });
      const first = queuedId(
        (await deliver(harness.smtpPort, { to: ['documents@ingest.test'], message })).data,
      );
      await harness.settled(first, 0);
      // retention.messages has passed for the record (its delivery is remembered a week).
      await redis.del(createKeySpace(harness.config.redis.prefix).message(first).record);
      const { data } = await deliver(harness.smtpPort, { to: ['documents@ingest.test'], message });
      expect(data?.text).toMatch(/^250 2\.0\.0 queued as /);
      expect(queuedId(data)).not.toBe(first);
    } finally {
      redis.disconnect();
      await harness.close();
    }
  });
});
