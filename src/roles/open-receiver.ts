import type { GatewayConfig } from '../config/schema.ts';
import {
  createMessageReceiver,
  type ReceiveDependencies,
  type ReceiveMessage,
} from '../intake/receive-message.ts';
import type { Logger } from '../logger.ts';
import type { GatewayMetrics } from '../metrics.ts';
import type { EventAnnouncer } from '../queue/announce-events.ts';
import type { NoticeTrigger } from '../queue/notice-queue.ts';
import { createProducer, type ProducerOptions } from '../queue/producer.ts';
import type { KeySpace } from '../record/keys.ts';
import type { MessageIndex } from '../record/message-index.ts';
import type { MessageLedger } from '../record/message-ledger.ts';
import type { RedisClient } from '../redis/connections.ts';
import type { Durability } from '../redis/durability.ts';
import { createSenderAuthenticator } from '../sender/authenticate-sender.ts';
import { createDnsResolver, type DnsResolver } from '../sender/dns-resolver.ts';

export interface ReceiverParts {
  config: GatewayConfig;
  /** Where records and bytes are committed. */
  intakeRedis: RedisClient;
  /** Where the upload jobs are added. */
  queueRedis: RedisClient;
  queue: ProducerOptions['queue'];
  keys: KeySpace;
  ledger: MessageLedger;
  index: MessageIndex;
  durability: Durability;
  /** Base URL of the record API, for the sourceEmail links. */
  publicUrl: string;
  logger: Logger;
  metrics?: GatewayMetrics;
  resolver?: DnsResolver;
  announcer?: EventAnnouncer;
  /** Told of each held message, for a notice to its sender; absent (replay): none. */
  notices?: NoticeTrigger;
  /** Reads the senders allowed at releases again for a sender not admitted (receive-message.ts). */
  readmit?: ReceiveDependencies['readmit'];
}

/**
 * What takes a message in, from DATA to the upload jobs, built once from the configuration
 * for the SMTP role and for `ingest-gateway replay` alike: the producer, the sender
 * authenticator (mailauth loaded now when a workspace authenticates, not in the middle of the
 * first such message) and the receiver.
 */
export async function openReceiver(parts: ReceiverParts): Promise<ReceiveMessage> {
  const { config, intakeRedis, keys, logger } = parts;
  const producer = createProducer({
    redis: intakeRedis,
    keys,
    queue: parts.queue,
    queueRedis: parts.queueRedis,
    ledger: parts.ledger,
    index: parts.index,
    logger,
    messageTtlSeconds: config.retention.messages,
    // The listing forgets a message after retention.messages: held mail lives no longer.
    heldTtlSeconds: Math.min(config.retention.held, config.retention.messages),
    waitAofTimeout: parts.durability.waitAof ? config.redis.waitAofTimeout : null,
    ...(parts.announcer ? { announcer: parts.announcer } : {}),
    ...(parts.notices ? { notices: parts.notices } : {}),
  });
  const authenticator = createSenderAuthenticator({
    resolver: parts.resolver ?? createDnsResolver(config.dns),
    hostname: config.smtp.hostname,
  });
  if (
    config.workspaces.some((ws) => (ws.senderAuthentication ?? config.auth.senderAuthentication) !== 'off')
  ) {
    await authenticator.prepare();
  }
  return createMessageReceiver({
    limits: config.smtp,
    auth: config.auth,
    redis: intakeRedis,
    keys,
    producer,
    publicUrl: parts.publicUrl,
    authenticator,
    ...(parts.metrics ? { metrics: parts.metrics } : {}),
    logger,
    scan: config.scan,
    ...(parts.readmit ? { readmit: parts.readmit } : {}),
  });
}
