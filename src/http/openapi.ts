import { attachmentStates } from '../record/message-record.ts';
import { defaultLimit, maxLimit, maxWaitSeconds } from './message-query.ts';
import { scanBound } from './search-messages.ts';

/**
 * GET /v1/openapi.json: the HTTP API described in OpenAPI 3.1, whose schemas are JSON Schema
 * 2020-12. test/integration/http-openapi.test.ts validates every route's answers against it,
 * so it cannot drift from what the API sends. Objects stay open (no additionalProperties:
 * false): the record grows fields, and clients ignore those they do not know.
 */

const nullableString = { type: ['string', 'null'] } as const;
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const jsonContent = (schema: object) => ({ content: { 'application/json': { schema } } });
const answer = (description: string, schema: object) => ({ description, ...jsonContent(schema) });
const refusal = (description: string) => answer(description, ref('Error'));
const unauthorized = {
  '401': refusal('http.token is set and the request lacks `Authorization: Bearer <token>`'),
};

const attachment = {
  type: 'object',
  required: [
    'entry',
    'part',
    'fileName',
    'contentType',
    'detectedType',
    'size',
    'sha256',
    'workspace',
    'state',
    'reason',
    'documentIdentifier',
    'attempts',
    'warnings',
    'updatedAt',
  ],
  properties: {
    entry: { type: 'integer', minimum: 0 },
    part: { type: 'integer', minimum: 0 },
    fileName: {
      type: 'string',
      description: 'The name sent upstream: sanitised, its extension matching the type',
    },
    originalFileName: { ...nullableString, description: 'The name as the message gave it, decoded' },
    contentType: { type: 'string', description: 'As the message declared it' },
    detectedType: { ...nullableString, description: 'The document type the bytes are; null: unsupported' },
    size: { type: 'integer', minimum: 0 },
    sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' },
    workspace: { ...nullableString, description: 'null for a skipped part' },
    state: { enum: [...attachmentStates] },
    reason: nullableString,
    documentIdentifier: nullableString,
    attempts: { type: 'integer', minimum: 0 },
    warnings: {
      type: 'array',
      items: {
        type: 'object',
        required: ['warningCode'],
        properties: { warningCode: { type: 'string' }, warningDetail: nullableString },
      },
    },
    updatedAt: { type: 'string', format: 'date-time' },
    error: {
      type: ['object', 'null'],
      required: ['errorCode', 'errorDetail'],
      properties: { errorCode: { type: 'string' }, errorDetail: { type: 'string' } },
    },
    requestError: {
      type: ['object', 'null'],
      required: ['type', 'errors'],
      properties: { type: { type: 'string' }, errors: { type: 'array', items: { type: 'object' } } },
    },
    ready: { type: ['boolean', 'null'] },
    failed: { type: ['boolean', 'null'] },
    readyDt: nullableString,
    completion: { type: ['object', 'null'] },
  },
};

const message = {
  type: 'object',
  required: [
    'id',
    'messageId',
    'receivedAt',
    'remoteAddress',
    'envelope',
    'from',
    'subject',
    'sourceEmail',
    'sourceEmailAddress',
    'size',
    'workspaces',
    'authentication',
    'status',
    'attachments',
  ],
  properties: {
    id: { type: 'string', pattern: '^[0-9a-z]{1,64}$', description: 'The id of the 250 reply' },
    messageId: { ...nullableString, description: 'The Message-ID header, without angle brackets' },
    receivedAt: { type: 'string', format: 'date-time' },
    remoteAddress: nullableString,
    envelope: {
      type: 'object',
      required: ['mailFrom', 'rcptTo'],
      properties: { mailFrom: nullableString, rcptTo: { type: 'array', items: { type: 'string' } } },
    },
    from: { ...nullableString, description: 'Header From address' },
    subject: nullableString,
    sourceEmail: { type: 'string', format: 'uri', description: 'GET /v1/messages/{id}/raw' },
    sourceEmailAddress: nullableString,
    size: { type: 'integer', minimum: 0 },
    workspaces: {
      type: 'array',
      items: {
        type: 'object',
        required: ['identifier', 'admitted', 'reason'],
        properties: { identifier: { type: 'string' }, admitted: { type: 'boolean' }, reason: nullableString },
      },
    },
    authentication: { type: ['object', 'null'] },
    status: { enum: ['committed', 'enqueued'] },
    attachments: { type: 'array', items: ref('Attachment') },
  },
};

const failedUpload = {
  type: 'object',
  required: [
    'jobId',
    'messageId',
    'entry',
    'workspace',
    'fileName',
    'reason',
    'attempts',
    'failedAt',
    'retryable',
  ],
  properties: {
    jobId: { type: 'string' },
    messageId: { type: 'string' },
    entry: { type: 'integer', minimum: 0 },
    workspace: { type: 'string' },
    fileName: { type: 'string' },
    reason: { type: 'string' },
    attempts: { type: 'integer', minimum: 0 },
    failedAt: { type: ['string', 'null'], format: 'date-time' },
    retryable: { type: 'boolean', description: 'false when the stored attachment has expired' },
  },
};

const retryOutcome = {
  type: 'object',
  required: ['retried', 'refused'],
  properties: {
    retried: { type: 'array', items: { type: 'string' } },
    refused: {
      type: 'array',
      items: {
        type: 'object',
        required: ['jobId', 'reason'],
        properties: { jobId: { type: 'string' }, reason: { type: 'string' } },
      },
    },
  },
};

const textParameter = (name: string, description: string) => ({
  name,
  in: 'query',
  description,
  schema: { type: 'string', minLength: 1 },
});

const listParameters = [
  textParameter('from', 'Header From or envelope sender contains this (case-insensitive)'),
  textParameter('to', 'Any envelope recipient contains this (case-insensitive)'),
  textParameter('workspace', 'A workspace the message went to (exact identifier)'),
  {
    name: 'state',
    in: 'query',
    description: 'Any attachment in this state',
    schema: { enum: [...attachmentStates] },
  },
  textParameter('q', 'Subject or an attachment file name contains this (case-insensitive)'),
  {
    name: 'since',
    in: 'query',
    description: 'Received at or after this time',
    schema: { type: 'string', format: 'date-time' },
  },
  {
    name: 'limit',
    in: 'query',
    description: 'Messages per page',
    schema: { type: 'integer', minimum: 1, maximum: maxLimit, default: defaultLimit },
  },
  { name: 'cursor', in: 'query', description: 'nextCursor of the previous page', schema: { type: 'string' } },
  {
    name: 'wait',
    in: 'query',
    description:
      'Long poll: answer as soon as a match has every attachment in a final state (uploaded, rejected, failed, ' +
      'skipped), listing only such messages; 408 when none does within this many seconds',
    schema: { type: 'integer', minimum: 1, maximum: maxWaitSeconds },
  },
];

const idParameter = (name: string, description: string) => ({
  name,
  in: 'path',
  required: true,
  description,
  schema: { type: 'string' },
});

export const openApiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'ingest-gateway',
    version: '1',
    description:
      'Message records, failed uploads and operations of the SMTP ingest gateway. With http.token set, every ' +
      'route but /healthz requires `Authorization: Bearer <token>`.',
  },
  jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
  security: [{}, { bearer: [] }],
  paths: {
    '/healthz': {
      get: {
        summary: 'The process is alive',
        security: [{}],
        responses: {
          '200': answer('Alive', {
            type: 'object',
            required: ['status'],
            properties: { status: { const: 'ok' } },
          }),
        },
      },
    },
    '/readyz': {
      get: {
        summary: 'Redis answers and the SMTP listener or the worker runs',
        responses: {
          '200': answer('Ready', ref('Readiness')),
          '503': answer('Not ready; the details say why', ref('Readiness')),
          ...unauthorized,
        },
      },
    },
    '/metrics': {
      get: {
        summary: 'Prometheus metrics',
        responses: {
          '200': {
            description: 'Prometheus text format',
            content: { 'text/plain': { schema: { type: 'string' } } },
          },
          ...unauthorized,
        },
      },
    },
    '/v1/messages': {
      get: {
        summary: 'Search the message records, newest first',
        description: `Pages by nextCursor. One request reads at most ${scanBound} index entries, so a page may hold fewer than limit messages and still have a next one.`,
        parameters: listParameters,
        responses: {
          '200': answer('A page of messages', ref('MessagePage')),
          '400': refusal('A parameter is unknown, repeated or malformed; problems lists each'),
          '408': refusal('wait: no matching message settled in time'),
          ...unauthorized,
        },
      },
      delete: {
        summary: 'Erase everything the gateway stored (http.allowReset only)',
        description:
          'Records, raw copies, blobs, indexes and the queues’ jobs under redis.prefix. For test isolation, when nothing is in flight.',
        responses: {
          '200': answer('Erased', {
            type: 'object',
            required: ['deleted'],
            properties: { deleted: { type: 'integer', minimum: 0, description: 'Redis keys deleted' } },
          }),
          '403': refusal('http.allowReset is false'),
          ...unauthorized,
        },
      },
    },
    '/v1/messages/{id}': {
      get: {
        summary: 'One message record',
        parameters: [idParameter('id', 'The id of the 250 reply')],
        responses: {
          '200': answer('The record', ref('Message')),
          '404': refusal('No such message'),
          ...unauthorized,
        },
      },
    },
    '/v1/messages/{id}/raw': {
      get: {
        summary: 'The e-mail as received (the record’s sourceEmail)',
        parameters: [idParameter('id', 'The id of the 250 reply')],
        responses: {
          '200': { description: 'The e-mail', content: { 'message/rfc822': { schema: { type: 'string' } } } },
          '404': refusal('No such message, or its retention is over'),
          ...unauthorized,
        },
      },
    },
    '/v1/messages/{id}/attachments/{entry}': {
      get: {
        summary: 'The stored bytes of one attachment, as a download',
        description:
          'Typed as detected (application/octet-stream for an unsupported part), always with ' +
          'Content-Disposition: attachment. The bytes are kept until every upload of them settled: ' +
          'uploaded and rejected attachments answer 410, as do expired ones; failed ones stay for a retry.',
        parameters: [
          idParameter('id', 'The id of the 250 reply'),
          {
            name: 'entry',
            in: 'path',
            required: true,
            description: 'The entry number',
            schema: { type: 'string', pattern: '^[0-9]{1,6}$' },
          },
        ],
        responses: {
          '200': { description: 'The bytes', content: { '*/*': { schema: { type: 'string' } } } },
          '404': refusal('No such message or entry'),
          '410': refusal('The attachment is no longer stored'),
          ...unauthorized,
        },
      },
    },
    '/v1/events': {
      get: {
        summary: 'Server-sent events: each new message, and each message whose attachment settled',
        description:
          'An event stream (text/event-stream) of `message` events, each one message record as ' +
          'GET /v1/messages/{id} gives it, when the message is accepted and whenever one of its ' +
          'attachments reaches a final state. The filters of GET /v1/messages apply; paging and wait do not.',
        parameters: listParameters.filter(
          (parameter) => !['limit', 'cursor', 'wait'].includes(parameter.name),
        ),
        responses: {
          '200': {
            description: 'The stream',
            content: { 'text/event-stream': { schema: { type: 'string' } } },
          },
          '400': refusal('A bad filter, or a paging parameter'),
          ...unauthorized,
        },
      },
    },
    '/v1/documents/{documentIdentifier}': {
      get: {
        summary: 'Where an uploaded document came from',
        parameters: [idParameter('documentIdentifier', 'The identifier the parsing service gave')],
        responses: {
          '200': answer('Its source', ref('DocumentSource')),
          '404': refusal('No such document'),
          ...unauthorized,
        },
      },
    },
    '/v1/uploads': {
      get: {
        summary: 'The failed uploads',
        parameters: [{ name: 'state', in: 'query', schema: { const: 'failed', default: 'failed' } }],
        responses: {
          '200': answer('Failed uploads', {
            type: 'object',
            required: ['uploads'],
            properties: { uploads: { type: 'array', items: ref('FailedUpload') } },
          }),
          '400': refusal('Another state, or an unknown parameter'),
          ...unauthorized,
        },
      },
    },
    '/v1/uploads/{jobId}/retry': {
      post: {
        summary: 'Put one failed upload back in the queue',
        parameters: [idParameter('jobId', 'As listed: <message id>-<entry>')],
        responses: {
          '200': answer('Queued again', ref('RetryOutcome')),
          '404': refusal('Not a failed upload'),
          '409': refusal('Its stored attachment has expired'),
          ...unauthorized,
        },
      },
    },
    '/v1/uploads/retry': {
      post: {
        summary: 'Put every failed upload back in the queue',
        responses: {
          '200': answer('What was queued again, and what not and why', ref('RetryOutcome')),
          ...unauthorized,
        },
      },
    },
    '/v1/openapi.json': {
      get: {
        summary: 'This description',
        responses: {
          '200': answer('OpenAPI 3.1', {
            type: 'object',
            required: ['openapi', 'paths'],
            properties: { openapi: { const: '3.1.0' }, paths: { type: 'object' } },
          }),
          ...unauthorized,
        },
      },
    },
  },
  components: {
    securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'http.token' } },
    schemas: {
      Error: {
        type: 'object',
        required: ['error'],
        properties: { error: { type: 'string' }, problems: { type: 'array', items: { type: 'string' } } },
      },
      Readiness: { type: 'object', required: ['ready'], properties: { ready: { type: 'boolean' } } },
      Attachment: attachment,
      Message: message,
      MessagePage: {
        type: 'object',
        required: ['messages', 'nextCursor'],
        properties: {
          messages: { type: 'array', items: ref('Message') },
          nextCursor: { ...nullableString, description: 'null: nothing older is left' },
        },
      },
      DocumentSource: {
        type: 'object',
        required: [
          'documentIdentifier',
          'messageId',
          'entry',
          'workspace',
          'fileName',
          'sourceEmail',
          'sourceEmailAddress',
        ],
        properties: {
          documentIdentifier: { type: 'string' },
          messageId: { type: 'string' },
          entry: { type: 'integer', minimum: 0 },
          workspace: { type: 'string' },
          fileName: { type: 'string' },
          sourceEmail: { type: 'string', format: 'uri' },
          sourceEmailAddress: nullableString,
        },
      },
      FailedUpload: failedUpload,
      RetryOutcome: retryOutcome,
    },
  },
};
