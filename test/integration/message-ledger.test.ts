import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis, type TestRedis } from '../../harness/redis-server.ts';
import { createKeySpace } from '../../src/record/keys.ts';
import { createMessageLedger, type MessageLedger, recordFields } from '../../src/record/message-ledger.ts';
import type { AttachmentEntry, MessageSummary } from '../../src/record/message-record.ts';

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

  it('reads the record with one entry, whose text a later change compares against', async () => {
    await commit('known');
    const { record, entry } = await ledger.readWithEntry('known', 0);
    expect(record?.attachments).toHaveLength(1);
    expect(entry?.value).toMatchObject({ state: 'uploading' });
    expect(entry?.text).toBe(await client.hget(keys.message('known').record, 'entry:0'));
    if (!entry) throw new Error('no entry');
    const written = await ledger.replaceEntry('known', 0, { state: 'queued', reason: 'busy' }, entry);
    expect(written?.text).toBe(await client.hget(keys.message('known').record, 'entry:0'));
    expect(written?.value).toMatchObject({ state: 'queued', reason: 'busy' });
    expect(await ledger.readWithEntry('known', 1)).toMatchObject({ entry: null });
    expect(await ledger.readWithEntry('none', 0)).toEqual({ record: null, entry: null });
  });

  it('keeps another writer’s change made since the text a writer knows', async () => {
    await commit('stale');
    const { entry: known } = await ledger.readWithEntry('stale', 0);
    const polling = { state: 'polling' as const, polls: 0, nextPollAt: null, reason: null };
    await ledger.updateEntry('stale', 0, { completion: polling });
    await ledger.replaceEntry('stale', 0, { state: 'uploaded', documentIdentifier: 'DOC-3' }, known);
    expect(await ledger.readEntry('stale', 0)).toMatchObject({
      state: 'uploaded',
      documentIdentifier: 'DOC-3',
      completion: polling,
    });
  });

  it('tells the settled channel once an entry reaches a final state, and not before', async () => {
    await commit('notice');
    const subscriber = new Redis(redis.url);
    const notices: string[] = [];
    subscriber.on('message', (_channel: string, messageId: string) => notices.push(messageId));
    await subscriber.subscribe(keys.settledChannel);
    try {
      const { entry } = await ledger.readWithEntry('notice', 0);
      const queued = await ledger.replaceEntry('notice', 0, { state: 'queued' }, entry);
      await ledger.replaceEntry('notice', 0, { state: 'uploaded', documentIdentifier: 'DOC-4' }, queued);
      // A command on the subscriber's connection is answered after the notices sent before it.
      await subscriber.ping();
      expect(notices).toEqual(['notice']);
    } finally {
      subscriber.disconnect();
    }
  });

  it('answers null for a record that is gone, and creates none', async () => {
    expect(await ledger.updateEntry('gone', 0, { state: 'failed' })).toBeNull();
    expect(await client.exists(keys.message('gone').record)).toBe(0);
  });
});
