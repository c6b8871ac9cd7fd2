import type { Redis } from 'ioredis';

/** What a committed 250 survives, as far as the Redis configuration tells. */
export interface Durability {
  /** `always`: every write fsynced; `everysec`: up to a second lost on power loss; `off`: a restart loses all. */
  aof: 'always' | 'everysec' | 'no' | 'off' | 'unknown';
  maxmemoryPolicy: string;
  /** Problems an operator must fix for the gateway's promise to hold. */
  warnings: string[];
}

/**
 * Reads the persistence settings. CONFIG may be disabled (managed Redis); then the result says
 * `unknown` rather than guessing.
 */
export async function inspectDurability(redis: Redis): Promise<Durability> {
  const warnings: string[] = [];
  let settings: Record<string, string>;
  try {
    const pairs = (await redis.call('CONFIG', 'GET', '*')) as string[];
    settings = {};
    for (let i = 0; i + 1 < pairs.length; i += 2) settings[pairs[i] ?? ''] = pairs[i + 1] ?? '';
  } catch {
    return {
      aof: 'unknown',
      maxmemoryPolicy: 'unknown',
      warnings: [
        'CONFIG GET is not allowed: make sure Redis runs with maxmemory-policy noeviction and AOF on',
      ],
    };
  }
  const maxmemoryPolicy = settings['maxmemory-policy'] ?? 'unknown';
  if (maxmemoryPolicy !== 'noeviction') {
    warnings.push(
      `maxmemory-policy is ${maxmemoryPolicy}: Redis may evict queued mail under memory pressure; set noeviction`,
    );
  }
  let aof: Durability['aof'] = 'off';
  if (settings.appendonly === 'yes') {
    const fsync = settings.appendfsync;
    aof = fsync === 'always' || fsync === 'everysec' || fsync === 'no' ? fsync : 'unknown';
  } else {
    warnings.push('AOF is off: a Redis restart loses every accepted message not yet uploaded');
  }
  return { aof, maxmemoryPolicy, warnings };
}
