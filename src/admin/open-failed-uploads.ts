import type { GatewayConfig } from '../config/schema.ts';
import type { Logger } from '../logger.ts';
import { closeConnection, createWorkerConnection, redisTarget } from '../queue/redis-connections.ts';
import { createRedisOutageLog } from '../queue/redis-outage-log.ts';
import { createUploadQueue } from '../queue/upload-queue.ts';
import { createKeySpace } from '../record/keys.ts';
import { createMessageLedger } from '../record/message-ledger.ts';
import { createFailedUploads, type FailedUploads } from '../uploader/failed-uploads.ts';

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
  const queue = createUploadQueue({
    connection: redis,
    keys,
    attempts: config.upload.attempts,
    retention: config.retention,
  });
  queue.on('error', (err) => logger.error({ err }, 'upload queue error'));
  const ledger = createMessageLedger(redis, keys, config.retention.messages);
  return {
    failed: createFailedUploads({ queue, redis, keys, ledger }),
    async close() {
      await queue.close();
      await closeConnection(redis);
    },
  };
}
