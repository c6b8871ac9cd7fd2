import { asError } from '../errors.ts';
import { createLiveSettings, type LiveSettings } from '../live-settings.ts';
import type { Logger } from '../logger.ts';
import type { RedisClient } from '../redis/connections.ts';
import { type DiscoveredTable, parseTable, readTableText } from './discovered-table.ts';

/**
 * Every instance's view of the route table from the service (docs/discovery.md): read from
 * Redis at the start, then again every `interval` ms, and put in force when it changed. A
 * session in progress is not disturbed: each RCPT looks its address up in the table in force
 * at that moment, and a transaction keeps the routes it took at RCPT. When Redis cannot be
 * read the table in force stays.
 */
export interface DiscoveryFollower {
  /** The table in force; null until one was read. */
  readonly table: LiveSettings<DiscoveredTable | null>;
  /** Reads the table now; resolves once it is in force (or found unchanged, or unreadable). */
  poll(): Promise<void>;
  /** Starts polling every `interval` ms. */
  start(): void;
  close(): void;
}

export function createDiscoveryFollower(options: {
  redis: RedisClient;
  key: string;
  organization: string;
  interval: number;
  logger: Logger;
}): DiscoveryFollower {
  const log = options.logger.child({ component: 'discovery' });
  const table = createLiveSettings<DiscoveredTable | null>(null);
  let lastText: string | null = null;
  let timer: NodeJS.Timeout | undefined;
  let failing = false;
  let polling: Promise<void> | undefined;

  async function read(): Promise<void> {
    let text: string | null;
    try {
      text = await readTableText(options.redis, options.key);
    } catch (err) {
      if (!failing)
        log.warn({ err: asError(err) }, 'cannot read the route table from Redis; the one in force stays');
      failing = true;
      return;
    }
    failing = false;
    if (text === null || text === lastText) return;
    lastText = text;
    const next = parseTable(text, options.organization);
    if (next === null) return;
    const previous = table.current();
    table.replace(next);
    // Only the read's time changed: said at debug, once per refresh would bury the rest.
    const level = previous === null || !sameRoutes(previous, next) ? 'info' : 'debug';
    log[level](
      {
        refreshedAt: new Date(next.refreshedAt).toISOString(),
        workspaces: next.workspaces.length,
        documentTypes: next.documentTypes.length,
        inGrace: next.retired.length,
      },
      'route table from the service in force',
    );
  }

  const poll = () => {
    polling ??= read().finally(() => {
      polling = undefined;
    });
    return polling;
  };

  return {
    table,
    poll,
    start() {
      if (timer !== undefined) return;
      timer = setInterval(() => void poll(), options.interval);
      timer.unref();
    },
    close() {
      clearInterval(timer);
    },
  };
}

/** Whether two tables route the same (they may differ in when they were read). */
function sameRoutes(a: DiscoveredTable, b: DiscoveredTable): boolean {
  const routes = (table: DiscoveredTable) =>
    JSON.stringify([table.workspaces, table.documentTypes, table.retired]);
  return routes(a) === routes(b);
}
