import * as z from 'zod/mini';
import {
  attachmentEntrySchema,
  completionStatusSchema,
  documentSourceSchema,
  messageRecordSchema,
} from '../../record/message-record.ts';
import { refusalEntrySchema } from '../../record/refusal-log.ts';
import {
  authenticationResultsSchema,
  senderAuthenticationSchema,
  senderVerdictSchema,
  workspaceDecisionSchema,
} from '../../sender/sender-authentication-schema.ts';
import { failedUploadSchema, retryOutcomeSchema } from '../../uploader/failed-uploads.ts';
import { failedDeliveryListSchema, failedDeliverySchema } from '../../webhooks/failed-deliveries.ts';

/**
 * The JSON answers of the HTTP API that are not record views, and the registry that names
 * every answer schema as a component of GET /v1/openapi.json.
 */

/** The body of every refusal (respond.ts). */
export const errorSchema = z.object({
  error: z.string().check(z.describe('What was refused, and why')),
  problems: z.optional(z.array(z.string()).check(z.describe('Each problem of a bad query'))),
});

export const healthSchema = z.object({ status: z.literal('ok') });

/** What POST /v1/resthooks answers the service: the handshake taken, or what a delivery did. */
export const resthookAnswerSchema = z.object({
  status: z
    .string()
    .check(
      z.describe(
        'handshake received; settled, repeat (already settled), kept for its upload, gone; or why the event was ignored',
      ),
    ),
});

/** Redis durability as GET /readyz reports it. */
const durabilitySchema = z.object({
  aof: z
    .enum(['always', 'everysec', 'no', 'off', 'unknown'])
    .check(z.describe('appendfsync of the Redis AOF; off: no AOF, a restart loses everything')),
  maxmemoryPolicy: z.string(),
  redisVersion: z.string().check(z.describe('unknown when INFO is not allowed')),
  waitAof: z.boolean().check(z.describe('Whether a 250 waits for an AOF fsync (redis.waitAof)')),
  warnings: z.array(z.string()).check(z.describe('What an operator should fix for durability to hold fully')),
});

/** What GET /readyz reports besides `ready`: each component, and Redis durability. */
export const readinessDetailsSchema = z.object({
  redis: z
    .enum(['ok', 'unreachable'])
    .check(z.describe('ok when every connection the running roles need is ready and answers')),
  connections: z
    .record(z.string(), z.string())
    .check(
      z.describe(
        'Each Redis connection the running roles need, by name (intake, queue, worker, completion): ' +
          'ready, no answer (a PING went unanswered), or the state it is in (connecting, reconnecting)',
      ),
    ),
  smtp: z.enum(['listening', 'stopped', 'not in this role']),
  worker: z.string().check(z.describe('running, stopped, not in this role, or why the worker is paused')),
  scanners: z.optional(
    z
      .record(z.string(), z.string())
      .check(
        z.describe(
          'Each configured scanner (clamav, rspamd) in the smtp role: ok, or why it did not answer its ping; absent when none is configured',
        ),
      ),
  ),
  durability: durabilitySchema,
});

export type ReadinessDetails = z.output<typeof readinessDetailsSchema>;

/** The durability facts describe the deployment: only a caller with access gets them. */
export const readinessSchema = z.extend(readinessDetailsSchema, {
  ready: z.boolean(),
  durability: z.optional(
    durabilitySchema.check(
      z.describe(
        'Absent when http.token is set and the request shows neither the token nor a console session',
      ),
    ),
  ),
});

export const erasedSchema = z.object({
  deleted: z.int().check(z.gte(0), z.describe('Redis keys deleted')),
});

export const deletedSchema = z.object({
  deleted: z.string().check(z.describe('The queue id of the message deleted')),
});

export const messagePageSchema = z.object({
  messages: z.array(messageRecordSchema).check(z.describe('Newest first')),
  nextCursor: z
    .nullable(z.string())
    .check(z.describe('The cursor of the next page; null: nothing older is left')),
});

export const refusalPageSchema = z.object({
  refusals: z.array(refusalEntrySchema).check(z.describe('Newest first')),
  nextCursor: z
    .nullable(z.string())
    .check(z.describe('The cursor of the next page; null: nothing older is left')),
});

export const failedUploadListSchema = z.object({ uploads: z.array(failedUploadSchema) });

/** The answer of POST /v1/messages/{id}/release and /discard. */
export const heldOutcomeSchema = z.object({
  queued: z
    .int()
    .check(z.gte(0), z.describe('Upload jobs this call queued: 0 for a discard, and for a release repeated')),
  allowed: z.optional(
    z
      .array(
        z.object({
          workspace: z.string(),
          rule: z.string().check(z.describe('The rule added: the address, or *@ its domain')),
          service: z
            .enum(['added', 'present', 'open'])
            .check(
              z.describe(
                "The parsing service's list: added now, named the rule already, or empty (the workspace takes any sender, and is left so)",
              ),
            ),
        }),
      )
      .check(z.describe('With allowSender: the rule added to each workspace the message was held for')),
  ),
  record: messageRecordSchema,
});

/** The body of POST /v1/messages/{id}/release; optional. */
export const releaseOptionsSchema = z.object({
  allowSender: z.optional(
    z
      .enum(['address', 'domain'])
      .check(
        z.describe(
          'Admit the sender from now on: its address, or every address of its domain (*@domain), is added to the allow-list of each workspace the message was held for, on the parsing service and in every gateway instance',
        ),
      ),
  ),
});

/**
 * GET /v1/openapi.json itself. Operations and schemas are maps here: their own shape is
 * OpenAPI's and JSON Schema's, which their specifications define.
 */
const map = z.record(z.string(), z.unknown());
export const openApiDocumentSchema = z.object({
  openapi: z.literal('3.1.0'),
  info: z.object({ title: z.string(), version: z.string(), description: z.string() }),
  jsonSchemaDialect: z.string(),
  servers: z.array(z.object({ url: z.string(), description: z.string() })),
  security: z.array(z.record(z.string(), z.array(z.string()))),
  paths: z.record(z.string(), z.record(z.string(), map)),
  components: z.object({
    securitySchemes: z.record(z.string(), map),
    responses: z.record(z.string(), map),
    schemas: z.record(z.string(), map),
  }),
});

export type OpenApiDocument = z.output<typeof openApiDocumentSchema>;

/** Each schema above that an answer or another schema refers to, by its component name. */
export const components = z.registry<{ id: string }>();
const named = {
  Error: errorSchema,
  Health: healthSchema,
  ResthookAnswer: resthookAnswerSchema,
  Readiness: readinessSchema,
  Erased: erasedSchema,
  Deleted: deletedSchema,
  Message: messageRecordSchema,
  Attachment: attachmentEntrySchema,
  CompletionStatus: completionStatusSchema,
  WorkspaceDecision: workspaceDecisionSchema,
  SenderAuthentication: senderAuthenticationSchema,
  AuthenticationResults: authenticationResultsSchema,
  SenderVerdict: senderVerdictSchema,
  MessagePage: messagePageSchema,
  Refusal: refusalEntrySchema,
  RefusalPage: refusalPageSchema,
  DocumentSource: documentSourceSchema,
  FailedUpload: failedUploadSchema,
  FailedUploadList: failedUploadListSchema,
  RetryOutcome: retryOutcomeSchema,
  HeldOutcome: heldOutcomeSchema,
  ReleaseOptions: releaseOptionsSchema,
  FailedDelivery: failedDeliverySchema,
  FailedDeliveryList: failedDeliveryListSchema,
  OpenApiDocument: openApiDocumentSchema,
} as const;
for (const [id, schema] of Object.entries(named)) components.add(schema, { id });

export type ComponentName = keyof typeof named;
