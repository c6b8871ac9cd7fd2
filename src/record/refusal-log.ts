import * as z from 'zod/mini';
import type { Logger } from '../logger.ts';
import type { RedisClient } from '../redis/connections.ts';
import type { KeySpace } from './keys.ts';

/**
 * The refusal log (README, "The refusal log"): every refused connection, sender, recipient and
 * message, so "my supplier says they sent it" has an answer without reading logs. One Redis
 * stream under its own hash tag, written by the SMTP role and read by GET /v1/refusals.
 *
 * Bounded twice: by age (retention.refusals, trimmed with MINID and filtered on read) and by
 * count (retention.maxRefusals, trimmed with MAXLEN at every addition), so a flood of refusals
 * replaces the oldest entries instead of filling Redis. Each field is cut to a bounded length,
 * so the stream never holds more than maxRefusals × about 1.5 KB.
 *
 * Writing never holds up the SMTP reply: an addition is sent and not awaited, and while Redis
 * is slow no more than MAX_PENDING additions wait; past that they are dropped and counted in
 * one log line a minute, as are additions Redis refused (it is away).
 */

/** Where in the SMTP session the refusal was sent. */
export const refusalStages = ['connect', 'mail', 'rcpt', 'data'] as const;
export type RefusalLogStage = (typeof refusalStages)[number];

const described = <T extends z.ZodMiniType>(schema: T, description: string): T =>
  schema.check(z.describe(description));
const nullableText = (description: string) => described(z.nullable(z.string()), description);

export const refusalEntrySchema = z.object({
  id: described(z.string(), 'The entry, in the log order (a Redis stream id)'),
  at: described(z.iso.datetime(), 'When the refusal was sent'),
  stage: described(z.enum(refusalStages), 'The SMTP command answered: connect, MAIL, RCPT or DATA'),
  code: described(
    z.string(),
    'Why, as the refusals metric names it (recipient_unknown, sender_not_admitted, …; internal: a failure answered 451 4.3.0)',
  ),
  reply: described(
    z.string(),
    'The SMTP reply sent, e.g. `550 5.1.1 <x@ingest.example>: no such ingest address here`',
  ),
  remoteAddress: nullableText('The client address (after the PROXY header, when one is trusted)'),
  helo: nullableText('The name the client gave in HELO/EHLO; null before it sent one'),
  mailFrom: nullableText('The envelope sender (MAIL FROM); null before MAIL and for the null sender <>'),
  recipients: described(
    z.array(z.string()),
    'RCPT: the recipient refused; DATA: every recipient of the transaction; empty before RCPT',
  ),
  headerFrom: nullableText('The header From, when DATA was read as far as the headers'),
  sessionId: described(z.string(), 'The SMTP session, as every log line of it names it'),
});

export type RefusalEntry = z.output<typeof refusalEntrySchema>;
/** What a hook knows of a refusal: the entry less what the log assigns. */
export type RefusalFacts = Omit<RefusalEntry, 'id' | 'at'>;

/** Characters kept of each text field: an address is at most 320, a reply line 512. */
const MAX_FIELD = 320;
const MAX_REPLY = 512;
/** Recipients kept per entry: a DATA refusal names at most this many (smtp.maxRecipients is 100 by default). */
const MAX_RECIPIENTS = 10;
/** Additions in flight at most before new ones are dropped: Redis is slow or away. */
export const MAX_PENDING = 1000;
/** Seconds between two age trims (XTRIM MINID) by one process, and between two dropped-count lines. */
const UPKEEP_SECONDS = 60;

export interface RefusalLog {
  /** Adds a refusal; never throws, never waits. */
  record(facts: RefusalFacts): void;
  /** Resolves when every addition sent so far has been answered (tests, shutdown). */
  flushed(): Promise<void>;
}

export interface RefusalLogOptions {
  redis: RedisClient;
  keys: KeySpace;
  /** retention.refusals, seconds. */
  retentionSeconds: number;
  /** retention.maxRefusals, entries. */
  maxEntries: number;
  logger: Logger;
  /** The clock, ms since the epoch; default Date.now. */
  now?: () => number;
}

const cut = (text: string | null, max = MAX_FIELD) => (text === null ? null : text.slice(0, max));

export function createRefusalLog(options: RefusalLogOptions): RefusalLog {
  const { redis, retentionSeconds, maxEntries } = options;
  const key = options.keys.refusalLog;
  const now = options.now ?? Date.now;
  const log = options.logger.child({ component: 'refusal-log' });
  const inFlight = new Set<Promise<void>>();
  let upkeepDue = 0;
  let lost = 0;
  let lostSince = 0;

  function lose(): void {
    lost += 1;
    const at = now();
    if (at - lostSince < UPKEEP_SECONDS * 1000) return;
    log.warn({ lost }, 'refusals not written to the refusal log: Redis is slow or away');
    lost = 0;
    lostSince = at;
  }

  return {
    record(facts) {
      if (inFlight.size >= MAX_PENDING) return lose();
      const at = now();
      const entry = JSON.stringify({
        at: new Date(at).toISOString(),
        stage: facts.stage,
        code: cut(facts.code),
        reply: cut(facts.reply, MAX_REPLY),
        remoteAddress: cut(facts.remoteAddress),
        helo: cut(facts.helo),
        mailFrom: cut(facts.mailFrom),
        recipients: facts.recipients
          .slice(0, MAX_RECIPIENTS)
          .map((recipient) => recipient.slice(0, MAX_FIELD)),
        headerFrom: cut(facts.headerFrom),
        sessionId: cut(facts.sessionId),
      });
      let write: Promise<unknown>;
      if (at >= upkeepDue) {
        upkeepDue = at + UPKEEP_SECONDS * 1000;
        // One key, so one MULTI: the entry, the age trim, and an expiry on the whole log, so
        // the log of a gateway that refuses nothing for a retention goes with its last entry.
        write = redis
          .multi()
          .xadd(key, 'MAXLEN', '~', maxEntries, '*', 'e', entry)
          .xtrim(key, 'MINID', '~', `${at - retentionSeconds * 1000}-0`)
          .expire(key, retentionSeconds + UPKEEP_SECONDS)
          .exec();
      } else {
        write = redis.xadd(key, 'MAXLEN', '~', maxEntries, '*', 'e', entry);
      }
      const pending = write.then(
        () => undefined,
        () => lose(),
      );
      inFlight.add(pending);
      void pending.finally(() => inFlight.delete(pending));
    },
    async flushed() {
      await Promise.all([...inFlight]);
    },
  };
}

/** What GET /v1/refusals selects. Text filters compare without case and match a substring; null: any. */
export interface RefusalFilter {
  /** Envelope sender or header From. */
  from: string | null;
  /** Any recipient. */
  to: string | null;
  /** The client address. */
  client: string | null;
  stage: RefusalLogStage | null;
  /** At or after this time, ms since the epoch. */
  since: number | null;
}

export interface RefusalPage {
  /** Newest first. */
  refusals: RefusalEntry[];
  /** The id after which the next page starts; null: nothing older is left. */
  nextCursor: string | null;
}

/** Entries one request reads at most, as GET /v1/messages bounds its scan. */
export const refusalScanBound = 5000;
const batchSize = 500;

export function matchesRefusal(entry: RefusalEntry, filter: RefusalFilter): boolean {
  const has = (values: ReadonlyArray<string | null>, wanted: string) => {
    const needle = wanted.toLowerCase();
    return values.some((value) => value?.toLowerCase().includes(needle) ?? false);
  };
  if (filter.stage !== null && entry.stage !== filter.stage) return false;
  if (filter.from !== null && !has([entry.mailFrom, entry.headerFrom], filter.from)) return false;
  if (filter.to !== null && !has(entry.recipients, filter.to)) return false;
  if (filter.client !== null && !has([entry.remoteAddress], filter.client)) return false;
  return true;
}

/**
 * Reads the log newest first, from before `after` (an entry id; null: the newest), keeping
 * the entries the filter matches and none older than retention.refusals.
 */
export function createRefusalReader(redis: RedisClient, keys: KeySpace, retentionSeconds: number) {
  return async function readRefusals(
    filter: RefusalFilter,
    limit: number,
    after: string | null,
    now = Date.now(),
  ): Promise<RefusalPage> {
    const oldest = Math.max(now - retentionSeconds * 1000, filter.since ?? 0);
    const refusals: RefusalEntry[] = [];
    let end = after === null ? '+' : `(${after}`;
    let scanned = 0;
    while (scanned < refusalScanBound) {
      const wanted = Math.min(batchSize, refusalScanBound - scanned);
      const batch = await redis.xrevrange(keys.refusalLog, end, `${oldest}-0`, 'COUNT', wanted);
      for (const [id, fields] of batch) {
        scanned += 1;
        end = `(${id}`;
        const entry = parseEntry(id, fields);
        if (entry === null || !matchesRefusal(entry, filter)) continue;
        refusals.push(entry);
        if (refusals.length === limit) return { refusals, nextCursor: id };
      }
      if (batch.length < wanted) return { refusals, nextCursor: null };
    }
    return { refusals, nextCursor: end.slice(1) };
  };
}

export type RefusalReader = ReturnType<typeof createRefusalReader>;

const storedSchema = z.omit(refusalEntrySchema, { id: true });

function parseEntry(id: string, fields: string[]): RefusalEntry | null {
  const value = fields[fields.indexOf('e') + 1];
  if (value === undefined) return null;
  try {
    const parsed = storedSchema.safeParse(JSON.parse(value));
    return parsed.success ? { id, ...parsed.data } : null;
  } catch {
    // An entry this version cannot read (written by another one): skipped, as an expired one is.
    return null;
  }
}
