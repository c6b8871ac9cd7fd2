import { routedWorkspaces } from '../config/routed-workspaces.ts';
import type { GatewayConfig, WorkspaceConfig } from '../config/schema.ts';
import { parseTable, readTableText } from '../intake/discovered-table.ts';
import type { ReceiveMessage } from '../intake/receive-message.ts';
import { createRouteTable, type RouteTable } from '../intake/route-table.ts';
import type { Logger } from '../logger.ts';
import { openQueues } from '../queue/queues.ts';
import { createAllowedSenders } from '../record/allowed-senders.ts';
import { createKeySpace } from '../record/keys.ts';
import { createMessageIndex } from '../record/message-index.ts';
import { createMessageLedger } from '../record/message-ledger.ts';
import { closeConnection, createIntakeConnection, redisTarget } from '../redis/connections.ts';
import { createRedisOutageLog } from '../redis/outage-log.ts';
import { withAllowedSenders } from '../sender/allowed-sender-rules.ts';
import { checkDurability } from './check-durability.ts';
import { openReceiver } from './open-receiver.ts';

/**
 * The SMTP role's intake without its listener, for `ingest-gateway replay`: the same
 * producer, receiver (MIME walk, sender authentication, scanners, decision, duplicate rule)
 * and route table, built from the configuration, committing to the gateway's Redis. The
 * running gateway's upload workers take the uploads from there as they take any other.
 */
export interface ReplayIntake {
  receive: ReceiveMessage;
  routes: RouteTable<WorkspaceConfig>;
  close(): Promise<void>;
}

export async function openReplayIntake(
  config: GatewayConfig,
  redisUrl: string,
  logger: Logger,
): Promise<ReplayIntake> {
  const keys = createKeySpace(config.redis.prefix);
  const target = redisTarget(redisUrl, config.redis);
  const outage = createRedisOutageLog({ logger });
  const intakeRedis = createIntakeConnection(target, outage, 'replay');
  const queueRedis = createIntakeConnection(target, outage, 'replay queue');
  const queues = openQueues({
    connection: queueRedis,
    keys,
    attempts: config.upload.attempts,
    retention: config.retention,
    logger,
    outage,
    user: 'replay command',
  });
  const close = async () => {
    await queues.close();
    await closeConnection(queueRedis);
    await closeConnection(intakeRedis);
  };
  try {
    // The same refusal of a Redis that may evict accepted mail as the daemon's.
    const durability = await checkDurability(intakeRedis, config, logger);
    const receive = await openReceiver({
      config,
      intakeRedis,
      queueRedis,
      queue: queues.uploads,
      keys,
      ledger: createMessageLedger(intakeRedis, keys, config.retention.messages),
      index: createMessageIndex(intakeRedis, keys, config.retention.messages),
      durability,
      // The record API's address as the daemon gives it (http.publicUrl, else its listener).
      publicUrl: config.http.publicUrl ?? `http://${config.http.host}:${config.http.port}`,
      logger,
    });
    // With discovery, the route table the running gateways follow, as Redis holds it.
    const table =
      config.discovery === undefined
        ? null
        : parseTable(await readTableText(intakeRedis, keys.discoveryTable), config.discovery.organization);
    const { routes } = routedWorkspaces(config, table, Date.now());
    // Senders allowed at releases are admitted here too, as by the daemon.
    const allowed = await createAllowedSenders(intakeRedis, keys).read();
    return {
      receive,
      routes: createRouteTable(withAllowedSenders(routes, allowed), config.auth.senderAuthentication, {
        subaddressSeparator: config.smtp.subaddressSeparator,
      }),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
