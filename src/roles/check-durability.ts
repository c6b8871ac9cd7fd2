import type { GatewayConfig } from '../config/schema.ts';
import type { Logger } from '../logger.ts';
import type { RedisClient } from '../redis/connections.ts';
import { assessNodes, type Durability, readRedisFacts } from '../redis/durability.ts';

/**
 * Waits for Redis, then refuses one that may evict accepted mail (docs/architecture.md, "Durability") and
 * says in the log what a 250 survives.
 */
export async function checkDurability(
  redis: RedisClient,
  config: GatewayConfig,
  logger: Logger,
): Promise<Durability> {
  await waitReady(redis);
  const { durability, refusal } = assessNodes(await readRedisFacts(redis), config.redis);
  if (refusal) throw new Error(refusal);
  const { aof, maxmemoryPolicy, version, waitAof } = durability;
  logger.info({ aof, maxmemoryPolicy, redisVersion: version, waitAof }, 'redis durability');
  for (const warning of durability.warnings) logger.warn(warning);
  return durability;
}

async function waitReady(redis: RedisClient): Promise<void> {
  if (redis.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('redis did not become ready within 10 s')), 10_000);
    redis.once('ready', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
