import type { GatewayConfig } from '../config/schema.ts';
import type { Lifecycle } from '../lifecycle.ts';
import type { LiveSettings } from '../live-settings.ts';
import type { Logger } from '../logger.ts';
import type { GatewayMetrics } from '../metrics.ts';
import type { Queues } from '../queue/queues.ts';
import type { KeySpace } from '../record/keys.ts';
import type { MessageIndex } from '../record/message-index.ts';
import type { MessageLedger } from '../record/message-ledger.ts';
import type { RedisClient, RedisTarget } from '../redis/connections.ts';
import type { Durability } from '../redis/durability.ts';
import type { NeededConnections } from '../redis/needed-connections.ts';
import type { RedisOutageLog } from '../redis/outage-log.ts';
import type { DnsResolver } from '../sender/dns-resolver.ts';

/**
 * What a reload (SIGHUP, or a watched file changed) replaces: the configuration, and where
 * uploads go with which key. The parsing-API key and base URL, the workspaces (routes,
 * allow-lists, upload fields, completion tracking) and the STARTTLS key and certificate take
 * effect at once; listeners, Redis and limits at the next start.
 */
export interface RunningSettings {
  readonly config: GatewayConfig;
  /** The configured service, or the in-process mock's URL. */
  readonly apiBaseUrl: string;
  readonly apiKey: string;
}

/** What every role is built from: the shared parts startGateway made first. */
export interface RoleContext {
  /** The configuration at start: listeners, limits and Redis follow it until the next start. */
  readonly config: GatewayConfig;
  readonly settings: LiveSettings<RunningSettings>;
  readonly lifecycle: Lifecycle;
  readonly logger: Logger;
  readonly metrics: GatewayMetrics;
  readonly keys: KeySpace;
  readonly ledger: MessageLedger;
  /** The listing index of GET /v1/messages, which the producer adds to. */
  readonly index: MessageIndex;
  readonly redis: RedisTarget;
  /** The connection the intake, the HTTP API and blob reads share. */
  readonly intakeRedis: RedisClient;
  /**
   * The connection of the BullMQ queues the intake and the HTTP API add to and read: kept
   * apart so that the scripts BullMQ defines on it are not copied onto the intake's MULTIs.
   */
  readonly queueRedis: RedisClient;
  /** The BullMQ queues on queueRedis, built once for the intake and the HTTP API. */
  readonly queues: Queues;
  /** The one account of Redis outages every connection and queue of this process reports to. */
  readonly outage: RedisOutageLog;
  readonly durability: Durability;
  /** The connections readiness checks: each role names those its work cannot go without. */
  readonly connections: NeededConnections;
  /** Jitter source for upload retries; tests pass () => 0 so a retry follows at once. */
  readonly random?: () => number;
  /** DNS for sender authentication; default node:dns with config.dns. */
  readonly resolver?: DnsResolver;
}
