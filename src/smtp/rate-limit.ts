import { createHash } from 'node:crypto';
import { isIPv6 } from 'node:net';
import { RefusalError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { GatewayMetrics } from '../metrics.ts';
import type { RedisClient } from '../redis/connections.ts';
import { compileNetworkList, unmapIpv4 } from './network-list.ts';
import type { SmtpSettings } from './smtp-settings-schema.ts';

/**
 * Per-client and per-sender rates, counted in Redis so that every instance sharing it
 * enforces one limit. Each rate is a sliding window approximated from two fixed ones (the
 * count of the current window plus the previous window's count weighted by how much of it
 * still overlaps), which has no burst at a window edge and costs one MULTI per check: INCR
 * and PEXPIRE of the current window's key, GET of the previous one. Both keys of one counter
 * share a hash tag of their own, so the MULTI stays in one Redis Cluster slot.
 *
 * When Redis does not answer, the checks let the client through (fail open) and log it once:
 * without Redis no message can be accepted anyway (DATA answers 451 4.3.0 and the sending
 * server keeps the mail), so refusing here would add nothing but a misleading 421 or 450.
 */
export interface RateLimiter {
  /** At connect: null to admit, or the refusal (421 4.7.0). */
  checkConnection(clientAddress: string): Promise<RefusalError | null>;
  /**
   * At MAIL FROM: null to admit, or the refusal (450 4.7.1). Every MAIL counts for the client;
   * the sender's count is only read here (see countAccepted). `sender` is '' for the null sender.
   */
  checkMessage(clientAddress: string, sender: string): Promise<RefusalError | null>;
  /**
   * After a 250: one more message from `sender`. The envelope sender is not authenticated, so
   * counting MAIL commands would let anyone use up a real sender's quota with MAILs that are
   * refused or never sent; counting accepted messages does not. The null sender has no quota.
   */
  countAccepted(clientAddress: string, sender: string): Promise<void>;
  /**
   * One more recipient refused to the client at RCPT (address harvesting, see
   * refused-recipients.ts): its count over the refused-recipient window, this one included, or
   * null when Redis did not answer. Counted whether or not the client is exempt; the caller
   * decides what the count means.
   */
  countRefusedRecipient(clientAddress: string): Promise<number | null>;
  /** The client's refused recipients over that window so far, or null when Redis did not answer. */
  refusedRecipients(clientAddress: string): Promise<number | null>;
}

export type RateLimitConfig = SmtpSettings['rateLimit'];

export interface RateLimiterOptions {
  redis: RedisClient;
  /** redis.prefix: every key starts with it. */
  prefix: string;
  limits: RateLimitConfig;
  logger: Logger;
  /** Milliseconds refused recipients are counted over (smtp.refusedRecipientWindow); default 1 h. */
  refusedRecipientWindow?: number;
  /** Counts the refusals by kind; absent: nothing is counted. */
  metrics?: GatewayMetrics;
  /** Milliseconds since the epoch; tests pass a fixed clock. */
  now?: () => number;
}

/**
 * How long a check may wait for Redis, in ms. A healthy Redis answers in well under a
 * millisecond; a hung one must not hold every new session for the intake connection's 10 s
 * command timeout.
 */
const CHECK_TIMEOUT_MS = 1000;

export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const { redis, prefix, limits } = options;
  const log = options.logger.child({ component: 'rate-limit' });
  const now = options.now ?? Date.now;
  const exempt = compileNetworkList(limits.exempt);
  const refusedRecipientWindow = options.refusedRecipientWindow ?? 3_600_000;
  let failing = false;

  /**
   * The estimated count over the last `windowMs`, or null when Redis failed. `increment` true
   * records one more event and counts it; false only reads what was recorded.
   */
  async function count(counter: string, increment = true, windowMs = limits.window): Promise<number | null> {
    const at = now();
    const window = Math.floor(at / windowMs);
    const key = (index: number) => `${prefix}:rate:{${counter}}:${index}`;
    try {
      const transaction = redis.multi();
      if (increment) transaction.incr(key(window)).pexpire(key(window), 2 * windowMs);
      else transaction.get(key(window));
      // The first reply is this window's count, the last the previous window's.
      const replies = await withTimeout(transaction.get(key(window - 1)).exec());
      const current = Number(replies?.[0]?.[1] ?? 0);
      const previous = Number(replies?.at(-1)?.[1] ?? 0);
      if (!Number.isFinite(current)) throw new Error('unexpected reply to the rate counter MULTI');
      if (failing) log.info('rate limits counted again');
      failing = false;
      return slidingWindowCount(current, previous, (at % windowMs) / windowMs);
    } catch (err) {
      if (!failing) log.warn({ err }, 'rate limits not counted (Redis unavailable): clients are let through');
      failing = true;
      return null;
    }
  }

  /** Whether this event takes the count past `limit`; `increment` false counts it without recording it. */
  async function exceeds(limit: number, counter: string, increment = true): Promise<boolean> {
    if (limit === 0) return false;
    const estimate = await count(counter, increment);
    return estimate !== null && estimate + (increment ? 0 : 1) > limit;
  }

  return {
    async checkConnection(clientAddress) {
      if (exempt(clientAddress)) return null;
      const client = clientSubject(clientAddress);
      if (await exceeds(limits.connectionsPerIp, `conn:${client}`)) {
        options.metrics?.rateLimited.inc({ kind: 'connection' });
        return new RefusalError(
          'CONNECTION_RATE_EXCEEDED',
          `too many connections from ${client}, try again later`,
        );
      }
      return null;
    },
    async checkMessage(clientAddress, sender) {
      if (exempt(clientAddress)) return null;
      const client = clientSubject(clientAddress);
      const [byClient, bySender] = await Promise.all([
        exceeds(limits.messagesPerIp, `msg:${client}`),
        sender === '' ? false : exceeds(limits.messagesPerSender, `from:${senderDigest(sender)}`, false),
      ]);
      if (byClient) {
        options.metrics?.rateLimited.inc({ kind: 'message_ip' });
        return new RefusalError('MESSAGE_RATE_EXCEEDED', `too many messages from ${client}, try again later`);
      }
      if (bySender) {
        options.metrics?.rateLimited.inc({ kind: 'message_sender' });
        return new RefusalError(
          'MESSAGE_RATE_EXCEEDED',
          `too many messages from <${sender}>, try again later`,
        );
      }
      return null;
    },
    async countAccepted(clientAddress, sender) {
      if (sender === '' || limits.messagesPerSender === 0 || exempt(clientAddress)) return;
      await count(`from:${senderDigest(sender)}`);
    },
    countRefusedRecipient(clientAddress) {
      return count(`rcpt:${clientSubject(clientAddress)}`, true, refusedRecipientWindow);
    },
    refusedRecipients(clientAddress) {
      return count(`rcpt:${clientSubject(clientAddress)}`, false, refusedRecipientWindow);
    },
  };
}

/**
 * The sliding-window estimate: this window's count plus the share of the previous window's
 * count that still falls within one window of now. `elapsed` is how far into the current
 * window now is, from 0 to 1. Pure.
 */
export function slidingWindowCount(current: number, previous: number, elapsed: number): number {
  return current + previous * (1 - elapsed);
}

/**
 * What a client is counted as: its IPv4 address, or the /64 of its IPv6 address, the block
 * one subscriber is given (RFC 6177), so that walking through the addresses of one network
 * does not reset the count. Pure.
 */
export function clientSubject(address: string): string {
  const plain = unmapIpv4(address);
  if (!isIPv6(plain)) return plain;
  const groups = expandIpv6(plain);
  return `${groups.slice(0, 4).join(':')}::/64`;
}

/** Eight groups of 4 hex digits; the address must be valid IPv6 (an IPv4 tail counts as two). */
function expandIpv6(address: string): string[] {
  const toGroups = (part: string): string[] =>
    part === ''
      ? []
      : part.split(':').flatMap((group) => {
          if (!group.includes('.')) return [group.padStart(4, '0').toLowerCase()];
          const [a = 0, b = 0, c = 0, d = 0] = group.split('.').map(Number);
          return [hex4(a * 256 + b), hex4(c * 256 + d)];
        });
  const [head = '', tail] = address.split('::');
  const left = toGroups(head);
  const right = tail === undefined ? [] : toGroups(tail);
  const zeros = Array<string>(8 - left.length - right.length).fill('0000');
  return [...left, ...zeros, ...right];
}

function hex4(value: number): string {
  return value.toString(16).padStart(4, '0');
}

/**
 * Senders are counted under a digest of the lower-cased address: the key stays short, holds
 * no address, and a `{` or `}` in an address cannot break the key's hash tag.
 */
function senderDigest(sender: string): string {
  return createHash('sha256').update(sender.toLowerCase()).digest('hex').slice(0, 32);
}

async function withTimeout<T>(promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
