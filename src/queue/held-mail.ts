import type { Queue } from 'bullmq';
import type { Logger } from '../logger.ts';
import type { KeySpace } from '../record/keys.ts';
import type { MessageLedger } from '../record/message-ledger.ts';
import type { MessageRecord, MessageSummary } from '../record/message-record.ts';
import type { RedisClient } from '../redis/connections.ts';
import { type AllowScope, allowRuleFor } from '../sender/allowed-sender-rules.ts';
import type { AllowedRule, SenderAllowing } from './allow-sender.ts';
import type { EventAnnouncer } from './announce-events.ts';
import { uploadJobOf } from './producer.ts';
import type { UploadJobData } from './upload-queue.ts';

/**
 * Release and discard of held mail (README, "Held mail"). A held message's record says
 * `state: "held"`, its documents `held`, and the commit kept their bytes (producer.ts) for
 * retention.held. Releasing queues exactly the upload jobs the intake would have queued; discarding
 * deletes the stored bytes and leaves the record. Both first change the record's state with a
 * compare-and-set, so of a release and a discard racing, one wins and the other is told so, and
 * two releases queue each upload once.
 */
export interface HeldMail {
  /**
   * With `allowSender`, the sender's address (or `*@` its domain) is first added to the
   * allow-list of each workspace the message was held for (allow-sender.ts); when that fails
   * the message stays held.
   */
  release(messageId: string, options?: { allowSender?: AllowScope }): Promise<HeldOutcome>;
  discard(messageId: string): Promise<HeldOutcome>;
}

export type HeldOutcome =
  /** Done now, or already done before (a repeated call changes nothing). */
  | { kind: 'done'; record: MessageRecord; queued: number; allowed?: AllowedRule[] }
  | { kind: 'missing' }
  /** The message is not held, or was released or discarded the other way. */
  | { kind: 'conflict'; reason: string }
  /** allowSender cannot apply to this message (no sender address, a forwarding confirmation). */
  | { kind: 'not_allowed'; reason: string }
  /** The parsing service did not take the allow-list change: nothing was released. */
  | { kind: 'service_failed'; reason: string };

export interface HeldMailOptions {
  redis: RedisClient;
  keys: KeySpace;
  ledger: MessageLedger;
  queue: Queue<UploadJobData>;
  /** retention.messages: a released message's keys live this long from its release. */
  messageTtlSeconds: number;
  /** Adds senders to allow-lists at a release; absent: allowSender is refused. */
  allowing?: SenderAllowing;
  /** Announces `message.released`; absent: nothing is announced. */
  announcer?: EventAnnouncer;
  logger: Logger;
}

/** Replace the record's summary only while it is still the one read: 1 written, 0 changed, -1 gone. */
const SWAP_SUMMARY = `
local current = redis.call('HGET', KEYS[1], 'summary')
if not current then return -1 end
if current ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'summary', ARGV[2])
return 1
`;

/** Tries before a state change gives up: each lost race means another writer changed the summary. */
const MAX_SUMMARY_RACES = 20;

export function createHeldMail(options: HeldMailOptions): HeldMail {
  const { redis, keys, ledger, queue } = options;
  const log = options.logger.child({ component: 'held-mail' });

  /**
   * Move the summary from held to `to`; resolves with the summary's state before (`held` when
   * this call moved it), or null when the record is gone.
   */
  async function leaveHeld(
    messageId: string,
    to: 'released' | 'discarded',
  ): Promise<MessageSummary['state'] | null> {
    const key = keys.message(messageId).record;
    for (let race = 0; race < MAX_SUMMARY_RACES; race++) {
      const text = await redis.hget(key, 'summary');
      if (text === null) return null;
      const summary = JSON.parse(text) as MessageSummary;
      if (summary.state !== 'held') return summary.state;
      const next = JSON.stringify({ ...summary, state: to } satisfies MessageSummary);
      const written = await redis.eval(SWAP_SUMMARY, 1, key, text, next);
      if (written === 1) return 'held';
      if (written === -1) return null;
    }
    throw new Error(`the record of message ${messageId} kept changing under ${MAX_SUMMARY_RACES} updates`);
  }

  /** Every key of the message, for a new expiry or deletion. */
  function keysOf(messageId: string, record: MessageRecord): string[] {
    const messageKeys = keys.message(messageId);
    const hashes = new Set(
      record.attachments.filter((entry) => entry.workspace !== null).map((e) => e.sha256),
    );
    return [
      messageKeys.raw,
      ...[...hashes].flatMap((sha256) => [
        messageKeys.blob(sha256),
        messageKeys.span(sha256),
        messageKeys.blobRefs(sha256),
      ]),
    ];
  }

  /** The workspaces a message is held for: those of its held documents, else the hold's. */
  function heldFor(record: MessageRecord): string[] {
    const named = record.attachments.flatMap((entry) =>
      entry.workspace !== null && (entry.state === 'held' || record.state === 'released')
        ? [entry.workspace]
        : [],
    );
    return [...new Set(record.hold ? [record.hold.workspace, ...named] : named)];
  }

  async function done(messageId: string, queued: number): Promise<HeldOutcome> {
    const record = await ledger.read(messageId);
    return record ? { kind: 'done', record, queued } : { kind: 'missing' };
  }

  /** Adds the sender to the allow-lists the message was held for; an outcome when it cannot. */
  async function allowSender(
    messageId: string,
    scope: AllowScope,
  ): Promise<{ allowed: AllowedRule[] } | Exclude<HeldOutcome, { kind: 'done' }>> {
    const record = await ledger.read(messageId);
    if (record === null) return { kind: 'missing' };
    if (record.state === 'discarded')
      return { kind: 'conflict', reason: `message ${messageId} was discarded` };
    if (record.state !== 'held' && record.state !== 'released') {
      return { kind: 'conflict', reason: `message ${messageId} is not held` };
    }
    if (record.hold?.reason === 'forwarding_confirmation') {
      return {
        kind: 'not_allowed',
        reason:
          'a forwarding confirmation comes from the mailbox provider, not a supplier: its sender is not allowed',
      };
    }
    if (options.allowing === undefined) {
      return { kind: 'not_allowed', reason: 'this gateway does not change allow-lists' };
    }
    const rule = record.from === null ? null : allowRuleFor(record.from, scope);
    if (rule === null) {
      return {
        kind: 'not_allowed',
        reason: `message ${messageId} has no sender address an allow-list rule can name`,
      };
    }
    const workspaces = heldFor(record);
    try {
      return { allowed: await options.allowing.allow({ workspaces, rule, messageId }) };
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      log.warn({ queueId: messageId, rule, err }, 'sender not allowed; the message stays held');
      return { kind: 'service_failed', reason: `the allow-list was not changed: ${reason}` };
    }
  }

  return {
    async release(messageId, releaseOptions = {}) {
      let allowed: AllowedRule[] | undefined;
      if (releaseOptions.allowSender !== undefined) {
        const outcome = await allowSender(messageId, releaseOptions.allowSender);
        if (!('allowed' in outcome)) return outcome;
        allowed = outcome.allowed;
      }
      const before = await leaveHeld(messageId, 'released');
      if (before === null) return { kind: 'missing' };
      if (before === 'discarded') return { kind: 'conflict', reason: `message ${messageId} was discarded` };
      if (before === undefined) return { kind: 'conflict', reason: `message ${messageId} is not held` };
      const record = await ledger.read(messageId);
      if (record === null) return { kind: 'missing' };
      // Held mail kept its bytes for retention.held; released, it lives as long as any message.
      const ttl = options.messageTtlSeconds;
      const expiry = redis.multi();
      for (const key of [...keysOf(messageId, record), keys.message(messageId).record])
        expiry.expire(key, ttl);
      await expiry.exec();
      // Each held entry is turned queued by one caller only, who adds its job: a release
      // repeated (or one that died half-way and is called again) queues only what is left.
      let queued = 0;
      for (const entry of record.attachments) {
        if (entry.state !== 'held') continue;
        let turned = false;
        await ledger.reviseEntry(messageId, entry.entry, (current) => {
          turned = current.state === 'held';
          return turned ? { state: 'queued', reason: null } : null;
        });
        if (!turned) continue;
        const job = uploadJobOf(messageId, entry);
        await queue.add(job.name, job.data, job.opts);
        queued++;
      }
      await ledger.markEnqueued(messageId);
      if (before === 'held' || queued > 0) {
        log.info({ queueId: messageId, queued, reason: record.hold?.reason }, 'held message released');
        // Once per workspace it was held for; the event id is the same for a release called
        // again after one that died half-way, so a receiver sees one release.
        await Promise.all(
          heldFor(record).map((workspace) =>
            options.announcer?.announce({
              event: 'message.released',
              messageId,
              workspace,
              payload: {
                reason: record.hold?.reason ?? null,
                queued: record.attachments.filter(
                  (entry) => entry.workspace === workspace && entry.state === 'held',
                ).length,
                ...(allowed ? { allowed: allowed.filter((rule) => rule.workspace === workspace) } : {}),
              },
            }),
          ),
        );
      }
      const outcome = await done(messageId, queued);
      return outcome.kind === 'done' && allowed ? { ...outcome, allowed } : outcome;
    },

    async discard(messageId) {
      const before = await leaveHeld(messageId, 'discarded');
      if (before === null) return { kind: 'missing' };
      if (before === 'released') return { kind: 'conflict', reason: `message ${messageId} was released` };
      if (before === undefined) return { kind: 'conflict', reason: `message ${messageId} is not held` };
      const record = await ledger.read(messageId);
      if (record === null) return { kind: 'missing' };
      for (const entry of record.attachments) {
        if (entry.state !== 'held') continue;
        await ledger.updateEntry(messageId, entry.entry, {
          state: 'discarded',
          reason: 'the held message was discarded',
        });
      }
      // The keys share the message's hash tag: one command deletes them on a cluster too.
      await redis.del(...keysOf(messageId, record));
      if (before === 'held') {
        log.info({ queueId: messageId, reason: record.hold?.reason }, 'held message discarded');
      }
      return done(messageId, 0);
    },
  };
}
