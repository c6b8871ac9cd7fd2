import { Cluster, type Redis } from 'ioredis';
import type { RedisClient } from './connections.ts';

/** What a committed 250 survives, as far as the Redis configuration tells. */
export interface Durability {
  /** `always`: every write fsynced; `everysec`: up to a second lost on power loss; `off`: a restart loses all. */
  aof: 'always' | 'everysec' | 'no' | 'off' | 'unknown';
  maxmemoryPolicy: string;
  /** Server version, e.g. `7.0.15`; `unknown` when INFO is not allowed. */
  version: string;
  /** Whether 250 waits for an AOF fsync (redis.waitAof on a server that has WAITAOF). */
  waitAof: boolean;
  /** Problems an operator should fix for the gateway's promise to hold fully. */
  warnings: string[];
}

export interface DurabilitySettings {
  allowEviction: boolean;
  waitAof: boolean;
}

/** The Redis settings that bear on durability, as read from the server. */
export interface RedisFacts {
  /** CONFIG GET results; null when CONFIG is not allowed (managed Redis). */
  config: Readonly<Record<string, string>> | null;
  version: string;
  /** On a Redis Cluster, which node ("host:port") said so; absent for the one server. */
  node?: string;
}

/**
 * The facts of every server that holds the gateway's data: the one Redis, or every node of a
 * cluster, masters and the replicas that a failover makes masters.
 */
export async function readRedisFacts(redis: RedisClient): Promise<RedisFacts[]> {
  if (!(redis instanceof Cluster)) return [await readServerFacts(redis)];
  return Promise.all(
    redis.nodes('all').map(async (node) => ({
      ...(await readServerFacts(node)),
      node: `${node.options.host}:${node.options.port}`,
    })),
  );
}

/**
 * Reads one server's persistence settings. CONFIG may be disabled (managed Redis); then the
 * facts say so rather than guessing.
 */
async function readServerFacts(redis: Redis): Promise<RedisFacts> {
  const info = await redis.info('server').catch(() => '');
  const version = /^redis_version:(\S+)/m.exec(info)?.[1] ?? 'unknown';
  try {
    const pairs = (await redis.call('CONFIG', 'GET', '*')) as string[];
    const config: Record<string, string> = {};
    for (let i = 0; i + 1 < pairs.length; i += 2) config[pairs[i] ?? ''] = pairs[i + 1] ?? '';
    return { config, version };
  } catch {
    return { config: null, version };
  }
}

/** WAITAOF came with Redis 7.2. */
export function supportsWaitAof(version: string): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major > 7 || (major === 7 && minor >= 2);
}

/**
 * What durability the gateway gets, and whether it may start at all (pure). Eviction can
 * drop accepted mail, so a policy other than noeviction refuses the start unless the
 * operator said otherwise; every other shortfall is a warning said at start and in /readyz.
 */
export function assessDurability(
  facts: RedisFacts,
  settings: DurabilitySettings,
): { durability: Durability; refusal: string | null } {
  const warnings: string[] = [];
  let refusal: string | null = null;
  const waitAof = settings.waitAof && supportsWaitAof(facts.version);
  if (settings.waitAof && !waitAof) {
    warnings.push(
      `redis.waitAof is set but Redis ${facts.version} has no WAITAOF (7.2 or later): 250 does not wait for an fsync`,
    );
  }
  if (!facts.config) {
    warnings.push(
      'CONFIG GET is not allowed: make sure Redis runs with maxmemory-policy noeviction and AOF on',
    );
    return {
      durability: { aof: 'unknown', maxmemoryPolicy: 'unknown', version: facts.version, waitAof, warnings },
      refusal,
    };
  }
  const maxmemoryPolicy = facts.config['maxmemory-policy'] ?? 'unknown';
  if (maxmemoryPolicy !== 'noeviction') {
    const problem = `Redis maxmemory-policy is ${maxmemoryPolicy}: it may evict accepted mail under memory pressure`;
    if (settings.allowEviction) warnings.push(`${problem} (allowed by redis.allowEviction)`);
    else
      refusal = `${problem}. Set maxmemory-policy noeviction, or redis.allowEviction: true to accept the risk`;
  }
  let aof: Durability['aof'] = 'off';
  if (facts.config.appendonly === 'yes') {
    const fsync = facts.config.appendfsync;
    aof = fsync === 'always' || fsync === 'everysec' || fsync === 'no' ? fsync : 'unknown';
    if (settings.waitAof && waitAof && aof !== 'always' && aof !== 'everysec') {
      warnings.push(
        `appendfsync is ${fsync}: WAITAOF waits for fsyncs Redis does not schedule; use everysec`,
      );
    }
  } else {
    warnings.push('AOF is off: a Redis restart loses every accepted message not yet uploaded');
    if (waitAof) warnings.push('redis.waitAof needs AOF on (appendonly yes): 250 does not wait for an fsync');
  }
  // WAITAOF with AOF off would fail every message: wait only when there is an AOF to wait for.
  const waiting = waitAof && aof !== 'off';
  return {
    durability: { aof, maxmemoryPolicy, version: facts.version, waitAof: waiting, warnings },
    refusal,
  };
}

/** From weakest to strongest: the promise of a deployment is that of its weakest node. */
const aofStrength: readonly Durability['aof'][] = ['off', 'unknown', 'no', 'everysec', 'always'];

/**
 * assessDurability over every node (pure): refused when any node refuses, the weakest AOF,
 * WAITAOF only when every node has it, and each warning once, naming the nodes it concerns.
 * For the one server this is assessDurability itself.
 */
export function assessNodes(
  nodes: readonly RedisFacts[],
  settings: DurabilitySettings,
): { durability: Durability; refusal: string | null } {
  const assessed = nodes.map((facts) => ({ node: facts.node, ...assessDurability(facts, settings) }));
  const [first] = assessed;
  if (first === undefined) throw new Error('no Redis node to assess');
  if (assessed.length === 1) return first;
  const on = (names: ReadonlyArray<string | undefined>) => names.filter(Boolean).join(', ');
  const refused = assessed.filter((node) => node.refusal !== null);
  const refusal = refused[0]?.refusal ? `${refused[0].refusal} (on ${on(refused.map((n) => n.node))})` : null;
  const warnings = new Map<string, Array<string | undefined>>();
  for (const { node, durability } of assessed) {
    for (const warning of durability.warnings)
      warnings.set(warning, [...(warnings.get(warning) ?? []), node]);
  }
  const distinct = (values: string[]) => [...new Set(values)].join(', ');
  const aof = assessed
    .map(({ durability }) => durability.aof)
    .reduce((weakest, aof) => (aofStrength.indexOf(aof) < aofStrength.indexOf(weakest) ? aof : weakest));
  return {
    durability: {
      aof,
      maxmemoryPolicy: distinct(assessed.map(({ durability }) => durability.maxmemoryPolicy)),
      version: distinct(assessed.map(({ durability }) => durability.version)),
      waitAof: assessed.every(({ durability }) => durability.waitAof),
      warnings: [...warnings].map(([warning, names]) => `${warning} (on ${on(names)})`),
    },
    refusal,
  };
}
