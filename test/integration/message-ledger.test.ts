import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKeySpace } from '../../src/record/keys.ts';
import { createMessageLedger, type MessageLedger, recordFields } from '../../src/record/message-ledger.ts';
import type { AttachmentEntry, MessageSummary } from '../../src/record/message-record.ts';
import { startRedis, type TestRedis } from '../support/redis-server.ts';

/** Several writers change one entry at once (upload worker, completion tracking, an operator's retry). */
describe('message ledger: entry updates', () => {
  let redis: TestRedis;
  let client: Redis;
  let ledger: MessageLedger;
  const keys = createKeySpace('ledger-test');

  beforeAll(async () => {
    redis = await startRedis();
    client = new Redis(redis.url);
    ledger = createMessageLedger(client, keys, 3600);
  });
  afterAll(async () => {
    await client?.quit();
    await redis?.close();
  });

  async function commit(messageId: string): Promise<void> {
    const summary = { id: messageId } as MessageSummary;
    const entry: AttachmentEntry = {
      entry: 0,
      part: 1,
      fileName: 'a.pdf',
      contentType: 'application/pdf',
      detectedType: 'application/pdf',
      size: 1,
      sha256: 'ab',
      workspace: 'ws',
      state: 'uploading',
      reason: null,
      documentIdentifier: null,
      attempts: 1,
      warnings: [],
      updatedAt: new Date().toISOString(),
    };
    await client.hset(keys.message(messageId).record, recordFields(summary, [entry]));
  }

  it('keeps every writer’s change when updates of one entry race', async () => {
    await commit('race');
    const polling = { state: 'polling' as const, polls: 0, nextPollAt: null, reason: null };
    await Promise.all([
      ledger.updateEntry('race', 0, { state: 'uploaded', documentIdentifier: 'DOC-1' }),
      ledger.updateEntry('race', 0, { completion: polling }),
      ledger.updateEntry('race', 0, { warnings: [{ warningCode: 'too_many_pages' }] }),
    ]);
    const entry = await ledger.readEntry('race', 0);
    expect(entry).toMatchObject({
      state: 'uploaded',
      documentIdentifier: 'DOC-1',
      completion: polling,
      warnings: [{ warningCode: 'too_many_pages' }],
    });
  });

  it('revises an entry from what it is, and leaves it alone when told to', async () => {
    await commit('revise');
    const failIfInFlight = (current: AttachmentEntry) =>
      current.state === 'uploading' ? { state: 'failed' as const, reason: 'gave up' } : null;
    expect(await ledger.reviseEntry('revise', 0, failIfInFlight)).toMatchObject({ state: 'failed' });
    await ledger.updateEntry('revise', 0, { state: 'uploaded', documentIdentifier: 'DOC-2' });
    expect(await ledger.reviseEntry('revise', 0, failIfInFlight)).toMatchObject({ state: 'uploaded' });
    expect(await ledger.readEntry('revise', 0)).toMatchObject({ state: 'uploaded', warnings: [] });
  });

  it('answers null for a record that is gone, and creates none', async () => {
    expect(await ledger.updateEntry('gone', 0, { state: 'failed' })).toBeNull();
    expect(await client.exists(keys.message('gone').record)).toBe(0);
  });
});
