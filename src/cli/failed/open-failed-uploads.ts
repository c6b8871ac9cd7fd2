import type { GatewayConfig } from '../../config/schema.ts';
import type { Logger } from '../../logger.ts';
import { openQueues } from '../../queue/queues.ts';
import { createKeySpace } from '../../record/keys.ts';
import { createMessageLedger } from '../../record/message-ledger.ts';
import { closeConnection, createWorkerConnection, redisTarget } from '../../redis/connections.ts';
import { createRedisOutageLog } from '../../redis/outage-log.ts';
import { createFailedUploads, type FailedUploads } from '../../uploader/failed-uploads.ts';

/** The failed uploads of the gateway a configuration describes, over its own Redis connection. */
export function openFailedUploads(
  config: GatewayConfig,
  redisUrl: string,
  logger: Logger,
): { failed: FailedUploads; close(): Promise<void> } {
  const keys = createKeySpace(config.redis.prefix);
  const redis = createWorkerConnection(
    redisTarget(redisUrl, config.redis),
    createRedisOutageLog({ logger }),
    'admin',
  );
  const queues = openQueues({
    connection: redis,
    keys,
    attempts: config.upload.attempts,
    retention: config.retention,
    logger,
    outage: null,
    user: 'failed command',
  });
  const ledger = createMessageLedger(redis, keys, config.retention.messages);
  return {
    failed: createFailedUploads({ queue: queues.uploads, redis, keys, ledger }),
    async close() {
      await queues.close();
      await closeConnection(redis);
    },
  };
}
