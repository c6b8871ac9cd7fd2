import { messagePaths } from './message-paths.ts';
import {
  answer,
  body,
  changing,
  guarded,
  type Json,
  pathParameter,
  type QueryParameters,
  ref,
  refusal,
  shared,
} from './path-pieces.ts';

/**
 * The routes of the HTTP API as OpenAPI path items: every status each one answers, as
 * create-http-api.ts and the route handlers give them. The schemas are the components
 * (answers.ts); the query parameters are generated from the schemas that parse them
 * (document.ts passes them in). The message routes are in message-paths.ts.
 */
export function apiPaths(query: QueryParameters): Record<string, Record<string, Json>> {
  return {
    '/healthz': {
      get: {
        operationId: 'getHealth',
        summary: 'The process is alive',
        description:
          'Open to all, token or not, and answered before the Host check: a probe needs no secret.',
        security: [{}],
        responses: { '200': answer('Alive', 'Health') },
      },
    },
    '/readyz': {
      get: {
        operationId: 'getReadiness',
        summary: 'Redis answers and the SMTP listener or the worker runs',
        description:
          'Open to all, token or not: a probe needs no secret. The durability facts (Redis version, configuration, nodes) are given only to a request with the token or a console session when http.token is set; without a token, the Host check applies as everywhere else.',
        security: [{}],
        responses: {
          '200': answer('Ready', 'Readiness'),
          '503': answer('Not ready; the components say why', 'Readiness'),
          '421': shared('Misdirected'),
          '500': shared('InternalError'),
        },
      },
    },
    '/metrics': {
      get: {
        operationId: 'getMetrics',
        summary: 'Prometheus metrics',
        responses: { '200': body('Prometheus text format', 'text/plain'), ...guarded },
      },
    },
    ...messagePaths(query),
    '/v1/documents/{documentIdentifier}': {
      get: {
        operationId: 'getDocumentSource',
        summary: 'Where an uploaded document came from',
        parameters: [
          pathParameter('documentIdentifier', 'The identifier the parsing service gave', '^[^/]{1,200}$'),
        ],
        responses: {
          '200': answer('Its source', 'DocumentSource'),
          '404': refusal('No such document'),
          ...guarded,
        },
      },
    },
    '/v1/uploads': {
      get: {
        operationId: 'listFailedUploads',
        summary: 'The failed uploads',
        parameters: query.uploads,
        responses: {
          '200': answer('Failed uploads', 'FailedUploadList'),
          '400': refusal('Another state, or an unknown parameter'),
          ...guarded,
        },
      },
    },
    '/v1/uploads/{jobId}/retry': {
      post: {
        operationId: 'retryUpload',
        summary: 'Put one failed upload back in the queue',
        parameters: [pathParameter('jobId', 'As listed: <message id>-<entry>', '^[^/]{1,200}$')],
        responses: {
          '200': answer('Queued again', 'RetryOutcome'),
          '404': refusal('Not a failed upload'),
          '409': refusal('Its stored attachment has expired, or it was settled meanwhile'),
          ...changing,
        },
      },
    },
    '/v1/uploads/retry': {
      post: {
        operationId: 'retryAllUploads',
        summary: 'Put every failed upload back in the queue',
        responses: {
          '200': answer('What was queued again, and what not and why', 'RetryOutcome'),
          ...changing,
        },
      },
    },
    '/v1/webhooks/deliveries': {
      get: {
        operationId: 'listFailedDeliveries',
        summary: 'The webhook deliveries given up',
        parameters: query.deliveries,
        responses: {
          '200': answer('Failed deliveries', 'FailedDeliveryList'),
          '400': refusal('Another state, or an unknown parameter'),
          ...guarded,
        },
      },
    },
    '/v1/webhooks/deliveries/{id}/retry': {
      post: {
        operationId: 'retryDelivery',
        summary: 'Put one failed webhook delivery back in the queue, with the whole retry schedule',
        parameters: [pathParameter('id', 'As listed: <event id>-<receiver>', '^[^/]{1,200}$')],
        responses: {
          '200': answer('Queued again', 'RetryOutcome'),
          '404': refusal('Not a failed delivery'),
          ...changing,
        },
      },
    },
    '/v1/resthooks': {
      post: {
        operationId: 'receiveResthook',
        summary: "The parsing service's parse events (trackCompletion via resthook)",
        description:
          'Called by the parsing service, not by people: no bearer token, the signature authenticates. ' +
          'With `X-Hook-Secret`: the activation handshake of a subscription this gateway is making. ' +
          'Otherwise a delivery `{event, timestamp, payload}` signed `X-Hook-Signature: <unix seconds>.<hex HMAC-SHA256 of the body>` ' +
          "with the workspace's organization's resthookSignatureKey; the timestamp must be within 5 minutes, and a repeated delivery is taken once.",
        security: [],
        parameters: [
          {
            name: 'X-Hook-Secret',
            in: 'header',
            required: false,
            description: 'The handshake of a new subscription',
            schema: { type: 'string' },
          },
          {
            name: 'X-Hook-Signature',
            in: 'header',
            required: false,
            description: '<unix seconds>.<hex HMAC-SHA256 of the raw body>; required for a delivery',
            schema: { type: 'string', pattern: '^[0-9]+\\.[0-9a-fA-F]{64}$' },
          },
        ],
        requestBody: {
          required: false,
          content: { 'application/json': { schema: { type: 'object' } } },
        },
        responses: {
          '200': answer(
            'The handshake taken, or the delivery taken (or repeated, or ignored)',
            'ResthookAnswer',
          ),
          '400': refusal('The signed body is not {event, timestamp, payload}'),
          '401': {
            description: 'No, a wrong or a stale signature',
            headers: { 'WWW-Authenticate': { schema: { const: 'X-Hook-Signature' } } },
            content: { 'application/json': { schema: ref('Error') } },
          },
          '409': refusal('A handshake while this gateway makes no subscription'),
          '413': refusal('A body over 8 MiB'),
          '421': shared('Misdirected'),
          '500': shared('InternalError'),
        },
      },
    },
    '/v1/openapi.json': {
      get: {
        operationId: 'getOpenApi',
        summary: 'This description',
        responses: { '200': answer('OpenAPI 3.1', 'OpenApiDocument'), ...guarded },
      },
    },
  };
}
