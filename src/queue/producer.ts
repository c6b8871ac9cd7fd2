import type { Queue } from 'bullmq';
import { Cluster } from 'ioredis';
import { RefusalError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { KeySpace } from '../record/keys.ts';
import type { MessageIndex } from '../record/message-index.ts';
import { type MessageLedger, recordFields } from '../record/message-ledger.ts';
import type { AttachmentEntry, MessageSummary } from '../record/message-record.ts';
import type { RedisClient } from '../redis/connections.ts';
import type { IncomingMessage } from '../store/message-store.ts';
import type { EventAnnouncer } from './announce-events.ts';
import type { NoticeTrigger } from './notice-queue.ts';
import { type UploadJobData, uploadJobId } from './upload-queue.ts';

/** A message that passed every check, ready to be committed. */
export interface AcceptedMessage {
  incoming: IncomingMessage;
  summary: MessageSummary;
  /** Entries in record order: the uploads (state `queued`) and the skipped parts. */
  entries: AttachmentEntry[];
  /**
   * Identifies this delivery: the SHA-256 of the raw bytes and the recipients. A sending
   * server that retries after a lost 250 sends the same bytes to the same recipients.
   */
  deliveryHash: string;
}

export interface EnqueueResult {
  /** The id given in the 250 reply. */
  messageId: string;
  /** True when this delivery repeated one already accepted (its id is returned). */
  duplicate: boolean;
}

export interface Producer {
  enqueue(message: AcceptedMessage): Promise<EnqueueResult>;
}

export interface ProducerOptions {
  redis: RedisClient;
  keys: KeySpace;
  queue: Queue<UploadJobData>;
  /** The connection `queue` was given: the jobs are written over it. */
  queueRedis: RedisClient;
  ledger: MessageLedger;
  /** The listing index of GET /v1/messages. */
  index: MessageIndex;
  logger: Logger;
  /** retention.messages: seconds the message's keys live after the commit. */
  messageTtlSeconds: number;
  /** retention.held: seconds a held message's keys live after the commit, unless it is released. */
  heldTtlSeconds: number;
  /** Milliseconds to wait for an AOF fsync (WAITAOF) before 250; null: do not wait. */
  waitAofTimeout: number | null;
  /** Announces `message.accepted` (or `message.held`) to the webhooks that asked for it; absent: nothing is announced. */
  announcer?: EventAnnouncer;
  /** Told of each held message, for a notice to its sender (src/notices); absent: none. */
  notices?: NoticeTrigger;
}

/** How long a delivery is remembered for duplicate detection: sending servers give up after 5 days. */
const deliveryMemorySeconds = 7 * 24 * 3600;
/**
 * Seconds a delivery is claimed before its record is committed: a commit takes milliseconds
 * and its commands time out after 10 s, so a claim left by a process that died lapses soon.
 */
const claimSeconds = 15;
/** A claim's value: the claimant's id behind this prefix, until the commit replaces it. */
const claimPrefix = 'claim:';
/** Delete the key only while it still holds this claim. */
const releaseScript = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;
/** Replace the key's value only while it is still the one read (or gone): compare and set. */
const swapScript = `
local current = redis.call('GET', KEYS[1])
if (current == false and ARGV[1] == '') or current == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
  return 1
end
return 0`;

/**
 * Commits an accepted message so that 250 is true: blobs, record and jobs are all in Redis
 * before enqueue() resolves. Order matters for crash safety:
 *   0. the delivery hash claimed (SET NX, a 15-second lease, released if the commit fails): a copy of the same delivery
 *      arriving meanwhile over another connection is asked to try again (451);
 *   1. one MULTI under the message's hash tag: parts renamed to their blobs (or, for a part
 *      stored as its span of the raw copy, the span written), unused parts deleted, blob
 *      reference counts and the record (status `committed`);
 *   2. the delivery hash remembered for a week → message id;
 *   3. the message added to the listing index (its own hash tag, so outside the MULTI) and,
 *      at the same time, the jobs added, with stable ids;
 *   4. the record marked `enqueued` (and, with redis.waitAof, fsynced).
 * A repeated delivery finds its hash: if the earlier one got as far as step 2 but not 4, the
 * repeat finishes it (steps 3–4 are idempotent), and both get the same id, so no attachment
 * is uploaded twice. A crash before step 2 leaves at most a committed record without jobs
 * that no client was told about, and a lease that lapses; the sender's retry is a new,
 * complete message.
 */
export function createProducer(options: ProducerOptions): Producer {
  const { redis, keys, queue, ledger, index } = options;
  const log = options.logger.child({ component: 'producer' });

  function jobsOf(messageId: string, entries: readonly AttachmentEntry[]) {
    return entries
      .filter((entry) => entry.workspace !== null && entry.state === 'queued')
      .map((entry) => uploadJobOf(messageId, entry));
  }

  /**
   * `message.accepted` once per workspace the message reached, with that workspace's documents
   * and the parts no workspace took (skipped, with the reason); a held message is announced
   * `message.held` instead, once, for the workspace whose policy holds it, with the reason.
   * Announced before the record is marked enqueued, so a repeated delivery that finishes this
   * one announces what is missing.
   */
  function messageEvents(
    messageId: string,
    summary: Pick<MessageSummary, 'receivedAt' | 'state' | 'hold'>,
    entries: readonly AttachmentEntry[],
  ): Promise<void>[] {
    const announcer = options.announcer;
    if (!announcer) return [];
    const { receivedAt } = summary;
    const of = (workspace: string) =>
      entries.filter((entry) => entry.workspace === workspace || entry.workspace === null);
    if (summary.state === 'held' && summary.hold) {
      const { workspace, reason } = summary.hold;
      return [
        announcer.announce({
          event: 'message.held',
          messageId,
          workspace,
          payload: { receivedAt, reason, attachments: of(workspace) },
        }),
      ];
    }
    const workspaces = new Set(
      entries.flatMap((entry) => (entry.workspace === null ? [] : [entry.workspace])),
    );
    return [...workspaces].map((workspace) =>
      announcer.announce({
        event: 'message.accepted',
        messageId,
        workspace,
        payload: { receivedAt, attachments: of(workspace) },
      }),
    );
  }

  /** The held message's notice, queued before the record is marked enqueued, as its events are. */
  function heldNotice(messageId: string, summary: Pick<MessageSummary, 'state' | 'hold'>): Promise<void>[] {
    if (!options.notices || summary.state !== 'held' || !summary.hold) return [];
    return [options.notices.held(messageId, summary.hold.workspace)];
  }

  async function finish(
    messageId: string,
    summary: Pick<MessageSummary, 'receivedAt' | 'state' | 'hold'>,
    entries: readonly AttachmentEntry[],
  ): Promise<void> {
    const { receivedAt } = summary;
    // One add per job, not addBulk: BullMQ queues a bulk on an ioredis pipeline, which sends
    // its script's whole text (EVAL) with every message, where add() sends its hash
    // (EVALSHA). The jobs need no transaction of their own: their ids are stable, and a
    // repeated delivery adds whatever is missing (see above). The index entry goes at the
    // same time over the intake's connection: both are idempotent and neither needs the
    // other, so a message waits one round trip less, and the entry's ZADD is gathered with
    // the other sessions' commands.
    await Promise.all([
      index.add(messageId, receivedAt),
      ...jobsOf(messageId, entries).map((job) => queue.add(job.name, job.data, job.opts)),
      ...messageEvents(messageId, summary, entries),
      ...heldNotice(messageId, summary),
    ]);
    await ledger.markEnqueued(messageId);
  }

  async function commit(message: AcceptedMessage): Promise<void> {
    const { incoming, entries } = message;
    const messageKeys = keys.message(incoming.messageId);
    const partKeys = incoming.partKeys();
    const partSpans = incoming.partSpans();
    const refs = new Map<string, number[]>();
    const blobSource = new Map<string, number>();
    for (const entry of entries) {
      // A held document keeps its bytes too: releasing it uploads them (held-mail.ts).
      if (entry.workspace === null || (entry.state !== 'queued' && entry.state !== 'held')) continue;
      refs.set(entry.sha256, [...(refs.get(entry.sha256) ?? []), entry.entry]);
      if (!blobSource.has(entry.sha256)) blobSource.set(entry.sha256, entry.part);
    }
    const kept = new Set(blobSource.values());
    // Everything of the message expires together; a failed upload keeps its blob till then.
    // Each key written is given its expiry once, and only keys this commit writes: a document
    // is a blob or a span, never both (an EXPIRE of the other, absent key was two commands of
    // ten per 100 KB message).
    // Held mail lives retention.held unless released (which gives it retention.messages).
    const ttl = message.summary.state === 'held' ? options.heldTtlSeconds : options.messageTtlSeconds;
    const multi = redis.multi();
    for (const [sha256, part] of blobSource) {
      const key = partKeys.get(part);
      const span = partSpans.get(part);
      if (key !== undefined)
        multi.rename(key, messageKeys.blob(sha256)).expire(messageKeys.blob(sha256), ttl);
      else if (span !== undefined) multi.set(messageKeys.span(sha256), JSON.stringify(span), 'EX', ttl);
      else throw new Error(`part ${part} of ${incoming.messageId} was not stored`);
    }
    for (const [part, key] of partKeys) if (!kept.has(part)) multi.del(key);
    for (const [sha256, users] of refs)
      multi.sadd(messageKeys.blobRefs(sha256), ...users).expire(messageKeys.blobRefs(sha256), ttl);
    multi.hset(messageKeys.record, recordFields(message.summary, entries));
    multi.expire(messageKeys.raw, ttl).expire(messageKeys.record, ttl);
    const results = await multi.exec();
    const failed = results?.find(([err]) => err !== null);
    if (!results || failed) throw failed?.[0] ?? new Error('the commit transaction was discarded');
  }

  return {
    async enqueue(message) {
      const deliveryKey = keys.delivery(message.deliveryHash);
      const id = message.incoming.messageId;
      const claim = `${claimPrefix}${id}`;
      const inProgress = () =>
        new RefusalError('DELIVERY_IN_PROGRESS', 'a copy of this message is being received; try again later');
      // Claim the delivery atomically, for a short lease: two copies of one message arriving
      // at once (a sender retrying over a second connection) must not both be accepted.
      if ((await redis.set(deliveryKey, claim, 'EX', claimSeconds, 'NX')) === null) {
        const earlierId = await redis.get(deliveryKey);
        // Another copy is being committed right now (or its process died before committing
        // and the lease lapses within claimSeconds): the sender tries again shortly.
        if (earlierId?.startsWith(claimPrefix)) throw inProgress();
        const earlier = earlierId === null ? null : await ledger.read(earlierId);
        if (earlierId !== null && earlier) {
          await message.incoming.discard();
          if (earlier.status !== 'enqueued') await finish(earlierId, earlier, earlier.attachments);
          if (options.waitAofTimeout !== null)
            await waitForFsync([redis, options.queueRedis], options.waitAofTimeout);
          log.info({ queueId: earlierId }, 'repeated delivery of an accepted message');
          return { messageId: earlierId, duplicate: true };
        }
        // Remembered, but its record has expired (retention.messages): a new message, taken
        // over only if nobody else took it meanwhile.
        const taken = await redis.eval(
          swapScript,
          1,
          deliveryKey,
          earlierId ?? '',
          claim,
          String(claimSeconds),
        );
        if (taken !== 1) throw inProgress();
      }
      try {
        await commit(message);
        message.incoming.markCommitted();
      } catch (err) {
        // Nothing was committed: let the sender's retry claim the delivery at once.
        // If the release fails too, the claim lapses after claimSeconds: the retry waits that long.
        await redis.eval(releaseScript, 1, deliveryKey, claim).catch((releaseErr: unknown) => {
          log.debug({ err: releaseErr, queueId: id }, 'delivery claim not released; it lapses on its own');
        });
        throw err;
      }
      // The record exists now: remember the delivery for as long as senders retry.
      await redis.set(deliveryKey, id, 'EX', deliveryMemorySeconds);
      await finish(id, message.summary, message.entries);
      if (options.waitAofTimeout !== null)
        await waitForFsync([redis, options.queueRedis], options.waitAofTimeout);
      return { messageId: message.incoming.messageId, duplicate: false };
    },
  };
}

/** The upload job of one entry, with its stable id: as the intake enqueues it, and a release. */
export function uploadJobOf(messageId: string, entry: AttachmentEntry) {
  return {
    name: 'upload',
    data: {
      messageId,
      entry: entry.entry,
      workspace: entry.workspace ?? '',
      ...(entry.subaddress === undefined ? {} : { subaddress: entry.subaddress }),
      ...(entry.documentType === undefined ? {} : { documentType: entry.documentType }),
      sha256: entry.sha256,
      fileName: entry.fileName,
      contentType: entry.detectedType ?? entry.contentType,
      size: entry.size,
    } satisfies UploadJobData,
    opts: { jobId: uploadJobId(messageId, entry.entry) },
  };
}

/**
 * WAITAOF 1 0: block until this connection's writes are fsynced to the local AOF, so 250
 * means on disk. A timeout is a failure (451): the sender retries, and the repeat is
 * recognised by its delivery hash, so nothing is uploaded twice. WAITAOF names no key and
 * waits for the writes of the connection it is sent on, so it is sent on each connection the
 * commit wrote over (the producer's and the queue's); on a Redis Cluster the message, its delivery and its jobs live on up to three masters,
 * each written over its own connection, so every master of each is asked (one that took no
 * write of that client answers at once).
 */
async function waitForFsync(connections: readonly RedisClient[], timeoutMs: number): Promise<void> {
  const servers = [...new Set(connections)].flatMap((client) =>
    client instanceof Cluster ? client.nodes('master') : [client],
  );
  await Promise.all(
    servers.map(async (server) => {
      const reply = (await server.call('WAITAOF', '1', '0', String(timeoutMs))) as [number, number];
      if (reply[0] < 1) throw new Error(`WAITAOF: the AOF was not fsynced within ${timeoutMs} ms`);
    }),
  );
}
