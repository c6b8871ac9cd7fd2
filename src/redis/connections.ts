import { setTimeout as sleep } from 'node:timers/promises';
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { RedisOutageLog } from './outage-log.ts';

/**
 * A connection to the gateway's Redis: one server (directly or through Sentinel) or a Redis
 * Cluster. Both answer the same commands; a Cluster sends each to the master of its key's
 * slot, so a MULTI or script must name keys of one slot only (src/record/keys.ts).
 */
export type RedisClient = Redis | Cluster;

interface HostPort {
  host: string;
  port: number;
}

/**
 * Where Redis is: a URL; Sentinels that name the current master (redis.sentinels); or the
 * seed nodes of a Redis Cluster (redis.cluster). With Sentinels, the URL still gives the
 * password and database; ioredis asks a Sentinel for the master on every (re)connect, so a
 * failover is a reconnect to the promoted replica. With a Cluster, the URL gives the user,
 * password and TLS (rediss:); the client learns every node from the seeds and follows a
 * replica's promotion through the cluster's MOVED replies.
 */
export type RedisTarget =
  | string
  | { url: string; sentinels: readonly HostPort[]; name: string }
  | { url: string; cluster: readonly HostPort[] };

/** The target a configuration describes: its cluster seeds, its Sentinels, or its URL. */
export function redisTarget(
  url: string,
  redis: {
    readonly sentinels: readonly string[];
    readonly sentinelName: string;
    readonly cluster: readonly string[];
  },
): RedisTarget {
  if (redis.cluster.length > 0) return { url, cluster: redis.cluster.map(hostPort) };
  if (redis.sentinels.length > 0) {
    return { url, sentinels: redis.sentinels.map(hostPort), name: redis.sentinelName };
  }
  return url;
}

/** "host:port" (the schema checked the form). */
function hostPort(entry: string): HostPort {
  const at = entry.lastIndexOf(':');
  return { host: entry.slice(0, at), port: Number(entry.slice(at + 1)) };
}

/** The user and password a URL carries, decoded, for clients built from options. */
function credentials(url: URL): Pick<RedisOptions, 'username' | 'password'> {
  return {
    ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
    ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
  };
}

function open(target: RedisTarget, options: RedisOptions): RedisClient {
  if (typeof target === 'string') return new Redis(target, options);
  const url = new URL(target.url);
  if ('cluster' in target) {
    const { retryStrategy, enableOfflineQueue, ...nodeOptions } = options;
    return new Cluster(
      target.cluster.map(({ host, port }) => ({ host, port })),
      {
        // The cluster as a whole: reconnect as a single server would, queue or refuse alike.
        ...(retryStrategy ? { clusterRetryStrategy: retryStrategy } : {}),
        ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
        redisOptions: {
          ...nodeOptions,
          ...credentials(url),
          ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
        },
      },
    );
  }
  return new Redis({
    ...options,
    sentinels: target.sentinels.map(({ host, port }) => ({ host, port })),
    name: target.name,
    ...credentials(url),
    db: Number(url.pathname.slice(1)) || 0,
  });
}

export interface IntakeConnectionOptions {
  /**
   * Gather the commands that the sessions send during one turn of the event loop into one
   * write to the socket (ioredis `enableAutoPipelining`); default false. Besides its raw copy
   * and its MULTIs, an accepted message sends small commands one after another (the raw
   * copy's first expiry, the delivery claim, the delivery hash, the record's status), each a
   * write of its own and a read and an answer in Redis; gathered, a busy intake's sessions
   * share them (the intake benchmark, 20 sessions: per 100 KB message 3 writes fewer in the gateway, 2
   * reads and 3 answers fewer in Redis, 6% less of Redis's CPU and 2% less CPU in all, more
   * when the core is shared; 5 MB messages no worse). Redis runs them in the order they
   * were sent. Not for a Redis Cluster, where each command goes to its node as it is sent.
   *
   * Not gathered: the append writer's frames (src/store/append-writer.ts), which go through
   * `sendCommand`, untouched by ioredis's gathering, so each is written at once and never
   * copied into a gathered write; and a MULTI, written whole at once, and so ahead of any
   * command gathered earlier in the same turn: a command that must run before a MULTI is
   * awaited first (as the producer awaits the delivery claim). A gathered write waits for
   * the answers to the one before it, so when Redis hangs a command times out after up to
   * twice `commandTimeout`.
   */
  gatherCommands?: boolean;
}

/**
 * A connection for the SMTP path: no offline queue and one retry per command, so that when
 * Redis is away a command fails at once and the session answers 451 instead of waiting;
 * and a command timeout, so that a Redis that hangs without closing the connection gives
 * 451 too rather than a session stuck until its socket timeout.
 */
export function createIntakeConnection(
  target: RedisTarget,
  outage: RedisOutageLog,
  name = 'intake',
  options: IntakeConnectionOptions = {},
): RedisClient {
  const cluster = typeof target !== 'string' && 'cluster' in target;
  return watch(
    open(target, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      // 10 s: far above any APPEND or MULTI of a healthy Redis, well below SMTP timeouts.
      commandTimeout: 10_000,
      connectionName: `ingest-gateway:${name}`,
      retryStrategy: reconnectDelay,
      ...(options.gatherCommands && !cluster ? { enableAutoPipelining: true } : {}),
    }),
    outage,
    name,
  );
}

/**
 * A connection for BullMQ workers and readers that should wait out a Redis restart:
 * BullMQ requires `maxRetriesPerRequest: null` for its blocking commands.
 */
export function createWorkerConnection(
  target: RedisTarget,
  outage: RedisOutageLog,
  name = 'worker',
): RedisClient {
  const options: RedisOptions = {
    maxRetriesPerRequest: null,
    connectionName: `ingest-gateway:${name}`,
    retryStrategy: reconnectDelay,
  };
  return watch(open(target, options), outage, name);
}

/** Reconnect quickly at first, then every 2 s at most: Redis restarts take seconds. */
function reconnectDelay(times: number): number {
  return Math.min(times * 100, 2000);
}

/** Tell the process's outage log of this connection's losses and recoveries. */
function watch(client: RedisClient, outage: RedisOutageLog, name: string): RedisClient {
  client.on('error', (err: Error) => outage.lost(name, err));
  client.on('ready', () => outage.ready(name));
  if (client instanceof Cluster) {
    // A Cluster reports a lost node here, once per failed command or reconnect, until its
    // replica takes over: the outage lasts until the node rejoins or leaves the slot map.
    const nodeName = (node: Redis) => `${name} ${node.options.host}:${node.options.port}`;
    client.on('node error', (err: Error, node: string) => outage.lost(`${name} ${node}`, err));
    client.on('+node', (node: Redis) => outage.ready(nodeName(node)));
    client.on('-node', (node: Redis) => outage.ready(nodeName(node)));
  }
  return client;
}

/**
 * How long QUIT may wait for its answer, ms. A Redis that is frozen (or behind a dead link)
 * keeps the socket open and never answers: shutdown must not wait on it.
 */
const QUIT_TIMEOUT_MS = 2000;

/** Close a client: QUIT when it is connected, disconnect otherwise or when QUIT is not answered; never throws. */
export async function closeConnection(client: RedisClient): Promise<void> {
  if (client.status === 'end') return;
  if (client.status === 'ready') {
    const timers = new AbortController();
    const quit = client.quit().then(
      () => true,
      // QUIT failed because the connection went away meanwhile: disconnect below.
      () => false,
    );
    const answered = await Promise.race([
      quit,
      sleep(QUIT_TIMEOUT_MS, false, { signal: timers.signal }).catch(() => false),
    ]);
    timers.abort();
    if (answered) return;
  }
  client.disconnect();
}

/**
 * A connection that asks once and gives up at once: no queue, no retry, 1.5 s to connect.
 * For the probes at start, which must answer "nothing there" rather than wait.
 */
export const PROBE_OPTIONS = {
  lazyConnect: true,
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  retryStrategy: () => null,
  connectTimeout: 1500,
} as const satisfies RedisOptions;

/** A target through a Redis Cluster's seed nodes. */
export type ClusterTarget = Extract<RedisTarget, { cluster: readonly HostPort[] }>;

/**
 * What the seed nodes say of their cluster, within a short wait: `ok` when a seed answers
 * CLUSTER INFO with `cluster_state:ok`, the state a seed reports otherwise (`fail` while
 * slots have no master), null when no seed answers (or none is a cluster node).
 */
export async function probeCluster(target: ClusterTarget): Promise<string | null> {
  const url = new URL(target.url);
  let state: string | null = null;
  for (const { host, port } of target.cluster) {
    const probe = new Redis({
      host,
      port,
      ...credentials(url),
      ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
      ...PROBE_OPTIONS,
    });
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      const info = String(await probe.call('CLUSTER', 'INFO'));
      state = /^cluster_state:(\S+)/m.exec(info)?.[1] ?? state;
      if (state === 'ok') return state;
    } catch {
      // This seed is down or no cluster node: ask the next.
    } finally {
      probe.disconnect();
    }
  }
  return state;
}
