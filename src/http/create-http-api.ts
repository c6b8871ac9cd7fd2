import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Queue } from 'bullmq';
import { listenOnHost } from '../listen-host.ts';
import type { RedisClient } from '../redis/connections.ts';
import type { ResthookReceiver } from '../uploader/resthook-receiver.ts';
import { createBearerCheck } from './bearer-token.ts';
import { fromSameOrigin } from './console/console-access.ts';
import { createConsole, isConsolePage } from './console/console-routes.ts';
import { createConsoleSessions, equal } from './console/console-session.ts';
import type { RouteView } from './console/routes-page.ts';
import { createHostCheck } from './host-check.ts';
import { createMessageFeed } from './message-feed.ts';
import type { ReadinessDetails } from './openapi/answers.ts';
import { createQueueBoard, isBoardPath } from './queue-board.ts';
import { createRecordRoutes, type RecordRoutesOptions } from './record-routes.ts';
import { json, refuse } from './respond.ts';
import { handleResthook, RESTHOOK_ROUTE } from './resthook-route.ts';
import { createMessageSearch } from './search-messages.ts';
import { createSettleNotifier } from './settle-notifier.ts';

export interface Readiness {
  ready: boolean;
  /** Component states and, when not ready, why. */
  details: ReadinessDetails;
}

/** The stores and settings the record API takes, as the HTTP API is given them (record-routes.ts). */
type RecordStores = Pick<
  RecordRoutesOptions,
  | 'redis'
  | 'keys'
  | 'ledger'
  | 'index'
  | 'failedUploads'
  | 'heldMail'
  | 'failedDeliveries'
  | 'refusals'
  | 'metrics'
  | 'allowReset'
  | 'logger'
>;

export interface HttpApiOptions extends RecordStores {
  readiness: () => Promise<Readiness>;
  /**
   * http.token: every endpoint but /healthz and /readyz then requires `Authorization: Bearer <token>`
   * (the configuration requires one when the API listens beyond loopback). null: none.
   */
  token: string | null;
  /**
   * http.publicUrl, null when unset: without a token, requests must name a loopback host or
   * this URL's host (host-check.ts).
   */
  publicUrl: string | null;
  /** Opens the connection that hears settle announcements (on the first long poll). */
  subscriber: () => RedisClient;
  /** The BullMQ queues the console's overview and Bull Board (/admin/queues) show. */
  queues: readonly Queue[];
  /** The route table in force, for the console's Routes page. */
  routes?: () => RouteView;
  /** The receiver of the service's parse events (POST /v1/resthooks); absent: 404 there. */
  resthooks?: ResthookReceiver;
}

export interface HttpApi {
  start(host: string, port: number): Promise<{ url: string; port: number }>;
  close(): Promise<void>;
}

function csrfHeaderMatches(req: IncomingMessage, csrf: string): boolean {
  const given = req.headers['x-csrf-token'];
  return typeof given === 'string' && equal(given, csrf);
}

/** Methods that change nothing: no CSRF check, and a console page may answer them. */
const safeMethods = new Set(['GET', 'HEAD']);

/**
 * Health, readiness, metrics, the message-record API (openapi/ describes it), failed
 * uploads, the event stream, the console (console/) and Bull Board. node:http with a table
 * of fixed routes: a dozen endpoints need no framework.
 *
 * Access: with http.token, a request but the probes' (/healthz, /readyz) shows the bearer
 * header or the console's session cookie (console/console-session.ts). A state-changing request from a browser must come
 * from a page of this server (Origin), and one that relies on the cookie must also carry
 * the session's CSRF token (a form field, or the x-csrf-token header); Bull Board's own
 * requests cannot, and rely on the Origin check and the cookie's SameSite=Strict.
 */
export function createHttpApi(options: HttpApiOptions): HttpApi {
  const { redis, keys, ledger, metrics, failedUploads } = options;
  const log = options.logger.child({ component: 'http' });
  const authorized = createBearerCheck(options.token);
  // With a token, the token is the check; a rebinding page does not have it.
  const hostAllowed = options.token === null ? createHostCheck(options.publicUrl) : () => true;
  const notifier = createSettleNotifier(options.subscriber, keys.settledChannel);
  const search = createMessageSearch(ledger, options.index);
  const listing = { search, notifier };
  const feed = createMessageFeed({ ledger, index: options.index, notifier, logger: log });
  const sessions = createConsoleSessions(options.token);
  const consolePages = createConsole({
    redis,
    keys,
    ledger,
    search,
    failedUploads,
    heldMail: options.heldMail,
    refusals: options.refusals,
    index: options.index,
    queues: options.queues,
    ...(options.routes ? { routes: options.routes } : {}),
    sessions,
    token: options.token,
  });
  const board = createQueueBoard(options.queues);
  let closing: Promise<void> | undefined;
  /** Where clients reach the API, once it listens; the OpenAPI document names it. */
  let serverUrl = options.publicUrl ?? '';
  const recordRoutes = createRecordRoutes({
    redis,
    keys,
    ledger,
    index: options.index,
    failedUploads,
    heldMail: options.heldMail,
    failedDeliveries: options.failedDeliveries,
    refusals: options.refusals,
    metrics,
    listing,
    feed,
    allowReset: options.allowReset,
    serverUrl: () => serverUrl,
    logger: log,
  });

  const server = createServer((req, res) => {
    route(req, res)
      .then(() => {
        if (res.destroyed && !res.writableFinished) {
          log.debug({ url: req.url }, 'http client closed the connection before the response ended');
        }
      })
      .catch((err: unknown) => {
        log.error({ err, url: req.url }, 'http request failed');
        if (!res.headersSent) refuse(res, 500, 'internal error');
        else res.destroy();
      });
  });

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://gateway');
    const path = url.pathname;
    const method = req.method === 'HEAD' ? 'GET' : (req.method ?? 'GET');
    // Liveness stays open: a probe needs no secret to learn that the process runs.
    if (path === '/healthz' && method === 'GET') return json(res, 200, { status: 'ok' });
    if (!hostAllowed(req.headers.host)) {
      return refuse(
        res,
        421,
        `misdirected request: without http.token this server answers only Host localhost, a loopback address or http.publicUrl's host, not ${JSON.stringify(req.headers.host)}`,
      );
    }
    // The service's parse events carry no token: their signature is their authentication.
    if (path === RESTHOOK_ROUTE && options.resthooks) return handleResthook(options.resthooks, req, res);
    // Readiness stays open too, for orchestrators' probes; the durability facts (Redis version,
    // configuration, node addresses) describe the deployment to an attacker, so only a caller
    // with the token or a console session gets them.
    if (path === '/readyz' && method === 'GET') {
      const insider = authorized(req.headers.authorization) || consolePages.visitor(req) !== null;
      return sendReadiness(res, insider);
    }
    // The console's script and style hold no secret, and the sign-in page needs them.
    if (method === 'GET' && (await consolePages.asset(path, res))) return;
    const safe = safeMethods.has(method);
    if (!safe && !fromSameOrigin(req)) {
      return refuse(
        res,
        403,
        "cross-origin request refused: state changes come from this server's pages only",
      );
    }
    if (path === '/login') return consolePages.login(req, res, url);
    const visitor = consolePages.visitor(req);
    const bearer = options.token !== null && authorized(req.headers.authorization);
    if (options.token !== null && !bearer && visitor === null) {
      if (safe && (isConsolePage(path) || isBoardPath(path))) {
        res.writeHead(303, { location: `/login?next=${encodeURIComponent(path + url.search)}` });
        res.end();
        return;
      }
      res.setHeader('www-authenticate', 'Bearer realm="ingest-gateway"');
      return refuse(res, 401, 'unauthorized: send Authorization: Bearer <http.token>');
    }
    if (!safe && consolePages.isForm(path)) return consolePages.submit(req, res, path, visitor);
    if (isBoardPath(path)) return board(req, res);
    if (!safe && !bearer && visitor !== null && !csrfHeaderMatches(req, visitor.session.csrf)) {
      return refuse(
        res,
        403,
        "missing or wrong x-csrf-token: a signed-in console request needs its session's",
      );
    }
    if (safe && isConsolePage(path)) return consolePages.show(req, res, url, visitor);
    return recordRoutes(req, res, url);
  }

  async function sendReadiness(res: ServerResponse, insider: boolean): Promise<void> {
    const { ready, details } = await options.readiness();
    const { durability, ...components } = details;
    const body = insider ? { ready, ...components, durability } : { ready, ...components };
    json(res, ready ? 200 : 503, body);
  }

  return {
    async start(configured, port) {
      const listen = async (host: string) => {
        server.listen(port, host);
        await once(server, 'listening');
      };
      const { host } = await listenOnHost(configured, listen, log);
      const bound = (server.address() as AddressInfo).port;
      const url = `http://${host.includes(':') ? `[${host}]` : host}:${bound}`;
      serverUrl = options.publicUrl ?? url;
      log.info({ url }, 'http listening');
      return { url, port: bound };
    },
    close() {
      closing ??= (async () => {
        await new Promise<void>((resolve) => {
          if (!server.listening) return resolve();
          server.close(() => resolve());
          server.closeAllConnections();
        });
        feed.close();
        await notifier.close();
      })();
      return closing;
    },
  };
}
