import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Queue } from 'bullmq';
import type { Logger } from '../logger.ts';
import type { GatewayMetrics } from '../metrics.ts';
import type { RedisClient } from '../queue/redis-connections.ts';
import type { KeySpace } from '../record/keys.ts';
import type { MessageIndex } from '../record/message-index.ts';
import type { MessageLedger } from '../record/message-ledger.ts';
import type { FailedUploads } from '../uploader/failed-uploads.ts';
import { sendAttachment } from './attachment-download.ts';
import { createBearerCheck } from './bearer-token.ts';
import { fromSameOrigin } from './console/console-access.ts';
import { createConsole, isConsolePage } from './console/console-routes.ts';
import { createConsoleSessions, equal } from './console/console-session.ts';
import { eraseEverything } from './erase-everything.ts';
import { streamEvents } from './event-stream.ts';
import { createHostCheck } from './host-check.ts';
import { createMessageFeed } from './message-feed.ts';
import { listMessages } from './message-routes.ts';
import { openApiDocument } from './openapi.ts';
import { createQueueBoard, isBoardPath } from './queue-board.ts';
import { json, refuse } from './respond.ts';
import { createMessageSearch } from './search-messages.ts';
import { createSettleNotifier } from './settle-notifier.ts';
import { sendRawCopy } from './stored-bytes.ts';
import { listUploads, retryAllUploads, retryUpload } from './upload-routes.ts';

export interface Readiness {
  ready: boolean;
  /** Component states and, when not ready, why. */
  details: Record<string, unknown>;
}

export interface HttpApiOptions {
  redis: RedisClient;
  keys: KeySpace;
  ledger: MessageLedger;
  index: MessageIndex;
  failedUploads: FailedUploads;
  metrics: GatewayMetrics;
  readiness: () => Promise<Readiness>;
  logger: Logger;
  /**
   * http.token: every endpoint but /healthz then requires `Authorization: Bearer <token>`
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
  /** http.allowReset: DELETE /v1/messages erases everything under redis.prefix; else 403. */
  allowReset: boolean;
  /** The BullMQ queues the console's overview and Bull Board (/admin/queues) show. */
  queues: readonly Queue[];
}

export interface HttpApi {
  start(host: string, port: number): Promise<{ url: string; port: number }>;
  close(): Promise<void>;
}

const messagePath = /^\/v1\/messages\/([0-9a-z]{1,64})(\/raw)?$/;
const attachmentPath = /^\/v1\/messages\/([0-9a-z]{1,64})\/attachments\/(\d{1,6})$/;
const documentPath = /^\/v1\/documents\/([^/]{1,200})$/;
const retryPath = /^\/v1\/uploads\/([^/]{1,200})\/retry$/;
/** The methods each fixed path answers, for 405 and its Allow header. */
const methods: ReadonlyMap<string, readonly string[]> = new Map([
  ['/v1/messages', ['GET', 'HEAD', 'DELETE']],
  ['/v1/uploads/retry', ['POST']],
]);

function csrfHeaderMatches(req: IncomingMessage, csrf: string): boolean {
  const given = req.headers['x-csrf-token'];
  return typeof given === 'string' && equal(given, csrf);
}

/** Methods that change nothing: no CSRF check, and a console page may answer them. */
const safeMethods = new Set(['GET', 'HEAD']);

/**
 * Health, readiness, metrics, the message-record API (openapi.ts describes it), failed
 * uploads, the event stream, the console (console/) and Bull Board. node:http with a table
 * of fixed routes: a dozen endpoints need no framework.
 *
 * Access: with http.token, a request shows the bearer header or the console's session
 * cookie (console/console-session.ts). A state-changing request from a browser must come
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
    queues: options.queues,
    sessions,
    token: options.token,
  });
  const board = createQueueBoard(options.queues);
  let closing: Promise<void> | undefined;

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
    const retry = retryPath.exec(path);
    const allowed = methods.get(path) ?? (retry ? ['POST'] : ['GET', 'HEAD']);
    if (!allowed.includes(req.method ?? 'GET')) {
      res.setHeader('allow', allowed.join(', '));
      return refuse(res, 405, `method not allowed: ${path} answers ${allowed.join(', ')}`);
    }
    if (retry?.[1]) return retryUpload(res, decodeURIComponent(retry[1]), failedUploads);
    if (path === '/v1/uploads/retry') return retryAllUploads(res, failedUploads);
    if (path === '/v1/uploads') return listUploads(res, url.searchParams, failedUploads);
    if (path === '/v1/messages' && method === 'DELETE') return reset(res);
    if (path === '/v1/messages') return listMessages(res, url.searchParams, listing);
    if (path === '/v1/events') return streamEvents(res, url.searchParams, feed);
    if (path === '/v1/openapi.json') return json(res, 200, openApiDocument);
    if (path === '/readyz') {
      const readiness = await options.readiness();
      return json(res, readiness.ready ? 200 : 503, { ready: readiness.ready, ...readiness.details });
    }
    if (path === '/metrics') {
      res.writeHead(200, { 'content-type': metrics.registry.contentType });
      res.end(await metrics.registry.metrics());
      return;
    }
    const attachment = attachmentPath.exec(path);
    if (attachment?.[1] && attachment[2]) {
      return sendAttachment(res, attachment[1], Number(attachment[2]), { redis, keys, ledger });
    }
    const message = messagePath.exec(path);
    if (message?.[1]) {
      const id = message[1];
      if (message[2]) return sendRaw(id, res);
      const record = await ledger.read(id);
      return record ? json(res, 200, record) : refuse(res, 404, `no message ${id}`);
    }
    const document = documentPath.exec(path);
    if (document?.[1]) {
      const identifier = decodeURIComponent(document[1]);
      const source = await ledger.findDocument(identifier);
      return source ? json(res, 200, source) : refuse(res, 404, `no document ${identifier}`);
    }
    refuse(res, 404, 'not found');
  }

  async function reset(res: ServerResponse): Promise<void> {
    // 403, not 404: the route exists, and the answer tells a developer which switch turns it on.
    if (!options.allowReset) {
      return refuse(res, 403, 'DELETE /v1/messages is off: set http.allowReset: true (test setups only)');
    }
    const deleted = await eraseEverything(redis, keys.prefix);
    log.warn({ deleted }, 'DELETE /v1/messages: erased every key under the prefix');
    json(res, 200, { deleted });
  }

  async function sendRaw(id: string, res: ServerResponse): Promise<void> {
    const sent = await sendRawCopy(res, redis, keys.message(id).raw, {
      'content-type': 'message/rfc822',
      'content-disposition': `attachment; filename="${id}.eml"`,
    });
    if (!sent) refuse(res, 404, `no stored e-mail for message ${id}`);
  }

  return {
    async start(host, port) {
      server.listen(port, host);
      await once(server, 'listening');
      const bound = (server.address() as AddressInfo).port;
      const url = `http://${host.includes(':') ? `[${host}]` : host}:${bound}`;
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
