import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../logger.ts';
import type { GatewayMetrics } from '../metrics.ts';
import type { RedisClient } from '../queue/redis-connections.ts';
import type { KeySpace } from '../record/keys.ts';
import type { MessageLedger } from '../record/message-ledger.ts';
import { createBearerCheck } from './bearer-token.ts';

export interface Readiness {
  ready: boolean;
  /** Component states and, when not ready, why. */
  details: Record<string, unknown>;
}

export interface HttpApiOptions {
  redis: RedisClient;
  keys: KeySpace;
  ledger: MessageLedger;
  metrics: GatewayMetrics;
  readiness: () => Promise<Readiness>;
  logger: Logger;
  /**
   * http.token: every endpoint but /healthz then requires `Authorization: Bearer <token>`
   * (the configuration requires one when the API listens beyond loopback). null: none.
   */
  token: string | null;
}

export interface HttpApi {
  start(host: string, port: number): Promise<{ url: string; port: number }>;
  close(): Promise<void>;
}

/** Raw messages are sent in ranges of this size: memory per download stays bounded. */
const rawChunkBytes = 1024 * 1024;
const messagePath = /^\/v1\/messages\/([0-9a-z]{1,64})(\/raw)?$/;
const documentPath = /^\/v1\/documents\/([^/]{1,200})$/;

/**
 * Health, readiness, metrics and the message-record API. node:http with a handful of fixed
 * routes: no framework is needed for six GET endpoints.
 */
export function createHttpApi(options: HttpApiOptions): HttpApi {
  const { redis, keys, ledger, metrics } = options;
  const log = options.logger.child({ component: 'http' });
  const authorized = createBearerCheck(options.token);
  let closing: Promise<void> | undefined;

  const server = createServer((req, res) => {
    route(req, res).catch((err: unknown) => {
      log.error({ err, url: req.url }, 'http request failed');
      if (!res.headersSent) json(res, 500, { error: 'internal error' });
      else res.destroy();
    });
  });

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'GET' && req.method !== 'HEAD') return json(res, 405, { error: 'method not allowed' });
    const path = new URL(req.url ?? '/', 'http://gateway').pathname;
    // Liveness stays open: a probe needs no secret to learn that the process runs.
    if (path === '/healthz') return json(res, 200, { status: 'ok' });
    if (!authorized(req.headers.authorization)) {
      res.setHeader('www-authenticate', 'Bearer realm="ingest-gateway"');
      return json(res, 401, { error: 'unauthorized: send Authorization: Bearer <http.token>' });
    }
    if (path === '/readyz') {
      const readiness = await options.readiness();
      return json(res, readiness.ready ? 200 : 503, { ready: readiness.ready, ...readiness.details });
    }
    if (path === '/metrics') {
      res.writeHead(200, { 'content-type': metrics.registry.contentType });
      res.end(await metrics.registry.metrics());
      return;
    }
    const message = messagePath.exec(path);
    if (message?.[1]) {
      const id = message[1];
      if (message[2]) return sendRaw(id, res);
      const record = await ledger.read(id);
      return record ? json(res, 200, record) : json(res, 404, { error: `no message ${id}` });
    }
    const document = documentPath.exec(path);
    if (document?.[1]) {
      const identifier = decodeURIComponent(document[1]);
      const source = await ledger.findDocument(identifier);
      return source ? json(res, 200, source) : json(res, 404, { error: `no document ${identifier}` });
    }
    json(res, 404, { error: 'not found' });
  }

  async function sendRaw(id: string, res: ServerResponse): Promise<void> {
    const key = keys.message(id).raw;
    const length = await redis.strlen(key);
    if (length === 0) return json(res, 404, { error: `no stored e-mail for message ${id}` });
    res.writeHead(200, {
      'content-type': 'message/rfc822',
      'content-length': String(length),
      'content-disposition': `attachment; filename="${id}.eml"`,
    });
    for (let start = 0; start < length; start += rawChunkBytes) {
      const chunk = await redis.getrangeBuffer(key, start, Math.min(start + rawChunkBytes, length) - 1);
      if (!res.write(chunk)) await once(res, 'drain');
    }
    res.end();
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
      closing ??= new Promise<void>((resolve) => {
        if (!server.listening) return resolve();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body, null, 2);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}
