import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../logger.ts';
import type { GatewayMetrics } from '../metrics.ts';
import type { HeldMail } from '../queue/held-mail.ts';
import type { KeySpace } from '../record/keys.ts';
import type { MessageIndex } from '../record/message-index.ts';
import type { MessageLedger } from '../record/message-ledger.ts';
import type { RefusalReader } from '../record/refusal-log.ts';
import type { RedisClient } from '../redis/connections.ts';
import type { FailedUploads } from '../uploader/failed-uploads.ts';
import type { FailedDeliveries } from '../webhooks/failed-deliveries.ts';
import { sendAttachment } from './attachment-download.ts';
import { deleteMessage } from './delete-message.ts';
import { eraseEverything } from './erase-everything.ts';
import { streamEvents } from './event-stream.ts';
import { changeHeld } from './held-routes.ts';
import type { MessageFeed } from './message-feed.ts';
import { listMessages, type MessageListing } from './message-routes.ts';
import type { OpenApiDocument } from './openapi/answers.ts';
import { createOpenApiDocument } from './openapi/document.ts';
import { listRefusals } from './refusal-routes.ts';
import { json, refuse } from './respond.ts';
import { sendRawCopy } from './stored-bytes.ts';
import { listUploads, retryAllUploads, retryUpload } from './upload-routes.ts';
import { listDeliveries, retryDelivery } from './webhook-routes.ts';

const messagePath = /^\/v1\/messages\/([0-9a-z]{1,64})(\/raw)?$/;
const attachmentPath = /^\/v1\/messages\/([0-9a-z]{1,64})\/attachments\/(\d{1,6})$/;
const documentPath = /^\/v1\/documents\/([^/]{1,200})$/;
const retryPath = /^\/v1\/uploads\/([^/]{1,200})\/retry$/;
const heldPath = /^\/v1\/messages\/([0-9a-z]{1,64})\/(release|discard)$/;
const deliveryRetryPath = /^\/v1\/webhooks\/deliveries\/([^/]{1,200})\/retry$/;
/** The methods each fixed path answers, for 405 and its Allow header. */
const methods: ReadonlyMap<string, readonly string[]> = new Map([
  ['/v1/messages', ['GET', 'HEAD', 'DELETE']],
  ['/v1/uploads/retry', ['POST']],
]);

export interface RecordRoutesOptions {
  redis: RedisClient;
  keys: KeySpace;
  ledger: MessageLedger;
  /** The listing index, which a deleted message leaves. */
  index: MessageIndex;
  failedUploads: FailedUploads;
  /** Release and discard of held mail (POST /v1/messages/{id}/release, /discard). */
  heldMail: HeldMail;
  /** The webhook deliveries given up (GET /v1/webhooks/deliveries). */
  failedDeliveries: FailedDeliveries;
  /** The refusal log (GET /v1/refusals and the console's Refused page). */
  refusals: RefusalReader;
  metrics: GatewayMetrics;
  listing: MessageListing;
  feed: MessageFeed;
  /** http.allowReset: DELETE /v1/messages erases everything under redis.prefix; else 403. */
  allowReset: boolean;
  /** Where clients reach the API, once it listens: the OpenAPI document names it. */
  serverUrl: () => string;
  logger: Logger;
}

/**
 * The record API, metrics and the OpenAPI document, for a request that create-http-api.ts has
 * let through (host, origin, token or console session). Answers 405 with Allow for a method a
 * path does not take, 404 for a path it does not know.
 */
export function createRecordRoutes(
  options: RecordRoutesOptions,
): (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void> {
  const { redis, keys, ledger, failedUploads, metrics, listing, feed, logger } = options;
  let openApi: OpenApiDocument | undefined;

  async function reset(res: ServerResponse): Promise<void> {
    // 403, not 404: the route exists, and the answer tells a developer which switch turns it on.
    if (!options.allowReset) {
      return refuse(res, 403, 'DELETE /v1/messages is off: set http.allowReset: true (test setups only)');
    }
    const deleted = await eraseEverything(redis, keys.prefix);
    logger.warn({ deleted }, 'DELETE /v1/messages: erased every key under the prefix');
    json(res, 200, { deleted });
  }

  async function sendRaw(id: string, res: ServerResponse): Promise<void> {
    const sent = await sendRawCopy(res, redis, keys.message(id).raw, {
      'content-type': 'message/rfc822',
      'content-disposition': `attachment; filename="${id}.eml"`,
    });
    if (!sent) refuse(res, 404, `no stored e-mail for message ${id}`);
  }

  return async (req, res, url) => {
    const path = url.pathname;
    const method = req.method === 'HEAD' ? 'GET' : (req.method ?? 'GET');
    const retry = retryPath.exec(path);
    const held = heldPath.exec(path);
    const deliveryRetry = deliveryRetryPath.exec(path);
    const one = messagePath.exec(path);
    const allowed =
      methods.get(path) ??
      (retry || held || deliveryRetry
        ? ['POST']
        : one && !one[2]
          ? ['GET', 'HEAD', 'DELETE']
          : ['GET', 'HEAD']);
    if (!allowed.includes(req.method ?? 'GET')) {
      res.setHeader('allow', allowed.join(', '));
      return refuse(res, 405, `method not allowed: ${path} answers ${allowed.join(', ')}`);
    }
    if (retry?.[1]) return retryUpload(res, decodeURIComponent(retry[1]), failedUploads);
    if (held?.[1] && (held[2] === 'release' || held[2] === 'discard')) {
      return changeHeld(req, res, held[1], held[2], options.heldMail);
    }
    if (path === '/v1/uploads/retry') return retryAllUploads(res, failedUploads);
    if (path === '/v1/uploads') return listUploads(res, url.searchParams, failedUploads);
    if (deliveryRetry?.[1]) {
      return retryDelivery(res, decodeURIComponent(deliveryRetry[1]), options.failedDeliveries);
    }
    if (path === '/v1/webhooks/deliveries') {
      return listDeliveries(res, url.searchParams, options.failedDeliveries);
    }
    if (path === '/v1/messages' && method === 'DELETE') return reset(res);
    if (path === '/v1/messages') return listMessages(res, url.searchParams, listing);
    if (path === '/v1/refusals') return listRefusals(res, url.searchParams, options.refusals);
    if (path === '/v1/events') return streamEvents(res, url.searchParams, feed);
    if (path === '/v1/openapi.json') {
      openApi ??= createOpenApiDocument(options.serverUrl());
      return json(res, 200, openApi);
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
      if (method === 'DELETE') {
        const outcome = await deleteMessage(redis, keys, ledger, options.index, id);
        if (outcome.kind === 'missing') return refuse(res, 404, `no message ${id}`);
        if (outcome.kind === 'busy') return refuse(res, 409, outcome.reason);
        logger.info({ queueId: id }, 'message deleted');
        return json(res, 200, { deleted: id });
      }
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
  };
}
