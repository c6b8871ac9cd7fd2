import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { RedisClient } from '../redis/connections.ts';
import type { KeySpace } from './keys.ts';

/**
 * The senders allowed when held mail was released with `allowSender` (README, "Held mail"):
 * kept in Redis, where every instance reads them and a restart finds them, and added by the
 * intake to the workspace's configured allow-list. The parsing service's own list gets the
 * same rule at the release; this copy is what lets the gateway admit the sender without a
 * configuration file being edited.
 */
export interface AllowedSenders {
  /** Records `rule` for `workspace`; resolves true when it was not recorded yet. */
  add(workspace: string, rule: string, origin: AllowedSenderOrigin): Promise<boolean>;
  /** Every recorded rule, by workspace, in the order recorded. */
  read(): Promise<Map<string, string[]>>;
  /**
   * Runs `change` while no other instance runs one for the same workspace: two releases that
   * each add a rule to the service's list must not both write the list they read.
   */
  exclusively<T>(workspace: string, change: () => Promise<T>): Promise<T>;
}

export interface AllowedSenderOrigin {
  /** The held message whose release allowed the sender. */
  messageId: string;
  /** ISO 8601. */
  at: string;
}

/** Milliseconds a lock lives unless released: longer than a GET and PATCH at api.timeout's default. */
const LOCK_TTL_MS = 150_000;
/** Milliseconds between tries to take a lock another instance holds. */
const LOCK_RETRY_MS = 50;
/** Tries before giving up on a lock: LOCK_TTL_MS / LOCK_RETRY_MS, so a stale lock expires first. */
const LOCK_TRIES = LOCK_TTL_MS / LOCK_RETRY_MS + 1;

/** Deletes the lock only while it is still ours: one that expired may belong to someone else now. */
const RELEASE_LOCK = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/** Workspace identifiers hold no line break (the configuration refuses control characters). */
const SEPARATOR = '\n';

export class AllowListLockError extends Error {
  constructor(workspace: string) {
    super(`another instance has been changing the allow-list of workspace ${workspace} for too long`);
    this.name = 'AllowListLockError';
  }
}

export function createAllowedSenders(redis: RedisClient, keys: KeySpace): AllowedSenders {
  return {
    async add(workspace, rule, origin) {
      const field = `${workspace}${SEPARATOR}${rule.toLowerCase()}`;
      const value = JSON.stringify({ rule, ...origin });
      return (await redis.hsetnx(keys.allowedSenders, field, value)) === 1;
    },

    async read() {
      const entries = await redis.hgetall(keys.allowedSenders);
      const recorded: { workspace: string; rule: string; at: string }[] = [];
      for (const [field, value] of Object.entries(entries)) {
        const cut = field.indexOf(SEPARATOR);
        if (cut <= 0) continue;
        const parsed = parseEntry(value);
        if (parsed === null) continue;
        recorded.push({ workspace: field.slice(0, cut), rule: parsed.rule, at: parsed.at });
      }
      recorded.sort((a, b) => a.at.localeCompare(b.at));
      const byWorkspace = new Map<string, string[]>();
      for (const { workspace, rule } of recorded) {
        byWorkspace.set(workspace, [...(byWorkspace.get(workspace) ?? []), rule]);
      }
      return byWorkspace;
    },

    async exclusively(workspace, change) {
      const key = keys.allowListLock(workspace);
      const token = randomUUID();
      for (let attempt = 0; ; attempt++) {
        const taken = await redis.set(key, token, 'PX', LOCK_TTL_MS, 'NX');
        if (taken === 'OK') break;
        if (attempt + 1 >= LOCK_TRIES) throw new AllowListLockError(workspace);
        await delay(LOCK_RETRY_MS);
      }
      try {
        return await change();
      } finally {
        await redis.eval(RELEASE_LOCK, 1, key, token);
      }
    },
  };
}

/** An entry as add() wrote it; null for anything else, which is skipped rather than trusted. */
function parseEntry(value: string): { rule: string; at: string } | null {
  try {
    const parsed: unknown = JSON.parse(value);
    if (typeof parsed !== 'object' || parsed === null) return null;
    const { rule, at } = parsed as { rule?: unknown; at?: unknown };
    return typeof rule === 'string' && typeof at === 'string' ? { rule, at } : null;
  } catch {
    // Not JSON: not written by add().
    return null;
  }
}
