import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { asError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { ResthookClient } from '../parsing-api/resthook-client.ts';
import type { KeySpace } from '../record/keys.ts';
import type { RedisClient } from '../redis/connections.ts';
import { PARSE_EVENTS, readSubscribedWorkspace, type SubscribedWorkspace } from './resthook-receiver.ts';

/**
 * The subscriptions behind `trackCompletion: {via: resthook}`: for each such workspace, one
 * subscription per parse event (PARSE_EVENTS) to `<publicUrl>/v1/resthooks`, made through the
 * parsing API with its activation handshake. What was made is kept in Redis, so instances
 * sharing it and restarts make each subscription once; a lock lets one instance at a time
 * make or remove them. A workspace that no longer asks for resthooks, or whose target or
 * service changed, has its subscriptions removed (and made again when it still asks).
 * A failure (the service or the target unreachable) is logged and tried again later; meanwhile
 * polling settles the documents.
 */

export interface ResthookWanted {
  workspace: string;
  targetUrl: string;
  apiBaseUrl: string;
}

export interface ResthookSubscriberOptions {
  redis: RedisClient;
  keys: KeySpace;
  /** A client of the service's resthook calls for the settings in force; closed after each pass. */
  client: () => ResthookClient;
  /** The workspaces that want parse events now (read at each sync, so a reload applies). */
  wanted: () => readonly ResthookWanted[];
  logger: Logger;
  /** Pause before a failed sync is tried again, ms; default 30000. */
  retryDelayMs?: number;
  /** How often the subscriptions are checked with the service (one it deactivated is made again), ms; default 600000. */
  recheckMs?: number;
}

export interface ResthookSubscriber {
  /** Makes and removes subscriptions until they match `wanted`; again after a failure. */
  sync(): void;
  /** Resolves when the sync under way (and any it queued) is done. */
  idle(): Promise<void>;
  close(): Promise<void>;
}

/** Longest a sync may hold the lock: a handshake and a few calls per workspace. */
const LOCK_MS = 120_000;
/** Longest the subscriber waits for the handshake's secret after the service answered. */
const HANDSHAKE_WAIT_MS = 5_000;

export function createResthookSubscriber(options: ResthookSubscriberOptions): ResthookSubscriber {
  const { redis, keys } = options;
  const log = options.logger.child({ component: 'resthooks' });
  const retryDelayMs = options.retryDelayMs ?? 30_000;
  const stop = new AbortController();
  let running: Promise<void> = Promise.resolve();
  let again = false;
  let busy = false;
  let retry: NodeJS.Timeout | undefined;

  function sync(): void {
    if (stop.signal.aborted) return;
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    running = (async () => {
      do {
        again = false;
        const ok = await syncOnce().catch((err: unknown) => {
          log.warn(
            { err: asError(err) },
            'resthook subscriptions not in order yet; polling settles documents meanwhile',
          );
          return false;
        });
        if (!ok && !stop.signal.aborted) {
          clearTimeout(retry);
          retry = setTimeout(sync, retryDelayMs);
          retry.unref();
        }
      } while (again && !stop.signal.aborted);
      busy = false;
    })();
  }

  /** One pass; false when it could not finish (the lock held elsewhere, or a call failed). */
  async function syncOnce(): Promise<boolean> {
    const token = randomBytes(16).toString('hex');
    const locked = await redis.set(keys.resthooks.lock, token, 'PX', LOCK_MS, 'NX');
    if (locked === null) {
      log.debug('another instance is making resthook subscriptions');
      return false;
    }
    const client = options.client();
    try {
      const wanted = new Map(options.wanted().map((want) => [want.workspace, want]));
      const made = await redis.smembers(keys.resthooks.workspaces);
      for (const workspace of made) {
        const state = await readSubscribedWorkspace(redis, keys, workspace);
        const want = wanted.get(workspace);
        if (state && want && same(state, want) && (await stillDelivering(client, state))) {
          wanted.delete(workspace);
          continue;
        }
        if (state) await removeAll(client, state);
        await redis.del(keys.resthooks.workspace(workspace));
        await redis.srem(keys.resthooks.workspaces, workspace);
      }
      for (const want of wanted.values()) {
        if (stop.signal.aborted) return false;
        await subscribe(client, want);
      }
      log.debug({ workspaces: options.wanted().length }, 'resthook subscriptions in order');
      return true;
    } finally {
      await client.close();
      // Released only if still ours (it may have expired and been taken by another instance).
      if ((await redis.get(keys.resthooks.lock)) === token) await redis.del(keys.resthooks.lock);
    }
  }

  async function subscribe(client: ResthookClient, want: ResthookWanted): Promise<void> {
    const organization = await client.organizationOf(want.workspace);
    const subscriptions: string[] = [];
    try {
      for (const event of Object.keys(PARSE_EVENTS)) {
        await redis.del(keys.resthooks.handshake);
        const identifier = await client.subscribe({
          targetUrl: want.targetUrl,
          event,
          workspace: want.workspace,
        });
        subscriptions.push(identifier);
        const secret = await handshakeSecret();
        if (secret === null) {
          throw new Error(
            `the service created subscription ${identifier} but no handshake reached ${want.targetUrl}; is http.publicUrl right?`,
          );
        }
        await client.activate(secret);
      }
    } catch (err) {
      // Half made is not kept: what was made is removed, and the next pass starts over.
      await Promise.all(
        subscriptions.map((identifier) => client.unsubscribe(identifier).catch(() => undefined)),
      );
      throw err;
    }
    const state: SubscribedWorkspace = {
      workspace: want.workspace,
      targetUrl: want.targetUrl,
      apiBaseUrl: want.apiBaseUrl,
      organization: organization.identifier,
      resthookSignatureKey: organization.resthookSignatureKey,
      subscriptions,
    };
    await redis.set(keys.resthooks.workspace(want.workspace), JSON.stringify(state));
    await redis.sadd(keys.resthooks.workspaces, want.workspace);
    log.info(
      { workspace: want.workspace, targetUrl: want.targetUrl, subscriptions },
      'subscribed to the parse events of the workspace',
    );
  }

  /** Whether every subscription of the workspace still delivers; says why not when one does not. */
  async function stillDelivering(client: ResthookClient, state: SubscribedWorkspace): Promise<boolean> {
    for (const identifier of state.subscriptions) {
      const status = await client.status(identifier);
      if (status.active) continue;
      log.warn(
        { workspace: state.workspace, subscription: identifier, reason: status.reason },
        'a parse-event subscription no longer delivers; making the subscriptions again',
      );
      return false;
    }
    return true;
  }

  async function removeAll(client: ResthookClient, state: SubscribedWorkspace): Promise<void> {
    for (const identifier of state.subscriptions) await client.unsubscribe(identifier);
    log.info(
      { workspace: state.workspace, subscriptions: state.subscriptions },
      'removed the parse-event subscriptions of the workspace',
    );
  }

  /** The secret the handshake left (the service sends it before or while it answers). */
  async function handshakeSecret(): Promise<string | null> {
    const deadline = Date.now() + HANDSHAKE_WAIT_MS;
    for (;;) {
      const secret = await redis.getdel(keys.resthooks.handshake);
      if (secret !== null) return secret;
      if (Date.now() >= deadline || stop.signal.aborted) return null;
      await sleep(50);
    }
  }

  const recheck = setInterval(sync, options.recheckMs ?? 600_000);
  recheck.unref();

  return {
    sync,
    idle: async () => {
      while (busy) await running;
    },
    async close() {
      stop.abort();
      clearTimeout(retry);
      clearInterval(recheck);
      await running;
    },
  };
}

function same(state: SubscribedWorkspace, want: ResthookWanted): boolean {
  return state.targetUrl === want.targetUrl && state.apiBaseUrl === want.apiBaseUrl;
}
