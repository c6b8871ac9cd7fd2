import { randomUUID } from 'node:crypto';
import { asError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { type CatalogueClient, CatalogueError } from '../parsing-api/organization-catalogue.ts';
import type { RedisClient } from '../redis/connections.ts';
import {
  type DiscoveredTable,
  nextTable,
  parseTable,
  readTableText,
  writeTable,
} from './discovered-table.ts';
import type { DiscoverySettings } from './discovery-settings-schema.ts';

/**
 * Reads the organization's workspaces and document types from the service and writes the
 * route table every instance follows (docs/discovery.md). One instance reads at a time: the
 * one that takes the lock key (SET NX PX), which it holds for `discovery.every`, so the
 * service is read once per period whatever the number of instances. A read that fails leaves
 * the last good table in Redis, and says so in the log; the table's age shows it
 * (`ingest_gateway_discovery_age_seconds`).
 *
 * Loaded only in processes that upload (it needs the HTTP client), never in an SMTP-only one.
 */
export interface DiscoveryRefresher {
  /** Takes the lock if free and reads the service; what came of it. */
  attempt(): Promise<'refreshed' | 'failed' | 'held elsewhere'>;
}

export function createDiscoveryRefresher(options: {
  redis: RedisClient;
  tableKey: string;
  lockKey: string;
  settings: () => DiscoverySettings;
  /** A client for the service as configured now (a reload may change the key or URL). */
  openClient: () => CatalogueClient;
  logger: Logger;
  now?: () => number;
}): DiscoveryRefresher {
  const log = options.logger.child({ component: 'discovery' });
  const now = options.now ?? Date.now;
  const token = randomUUID();

  async function refresh(settings: DiscoverySettings): Promise<'refreshed' | 'failed'> {
    const previousText = await readTableText(options.redis, options.tableKey);
    const previous = parseTable(previousText, settings.organization);
    const client = options.openClient();
    try {
      const catalogue = await client.read(settings.organization);
      const { table, changes } = nextTable(previous, catalogue, {
        organization: settings.organization,
        now: now(),
        graceMs: settings.rotationGrace * 1000,
      });
      await writeTable(options.redis, options.tableKey, table);
      for (const change of changes) log.info(change, `route ${change.change}`);
      // A refresh that changed nothing is said at debug: one line per period would bury the rest.
      const level = previous === null || changes.length > 0 ? 'info' : 'debug';
      log[level](
        {
          organization: settings.organization,
          workspaces: table.workspaces.length,
          documentTypes: table.documentTypes.length,
          inGrace: table.retired.length,
          changes: changes.length,
        },
        previous === null ? 'route table read from the service' : 'route table refreshed from the service',
      );
      return 'refreshed';
    } catch (err) {
      if (!(err instanceof CatalogueError)) throw err;
      log.warn(
        {
          organization: settings.organization,
          err: asError(err),
          ...lastGood(previous),
        },
        previous === null
          ? 'discovery refresh failed and there is no route table from the service yet: only the file routes'
          : 'discovery refresh failed; the last good route table stays',
      );
      return 'failed';
    } finally {
      await client.close();
    }
  }

  function lastGood(previous: DiscoveredTable | null) {
    if (previous === null) return {};
    return {
      refreshedAt: new Date(previous.refreshedAt).toISOString(),
      ageSeconds: Math.round((now() - previous.refreshedAt) / 1000),
    };
  }

  return {
    async attempt() {
      const settings = options.settings();
      const taken = await options.redis.set(options.lockKey, token, 'PX', settings.every, 'NX');
      if (taken !== 'OK') return 'held elsewhere';
      return refresh(settings);
    },
  };
}
