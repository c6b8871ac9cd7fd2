import { isDeepStrictEqual } from 'node:util';
import * as z from 'zod/mini';
import { messageQueryParameters } from '../message-query.ts';
import { refusalQueryParameters } from '../refusal-routes.ts';
import { uploadQueryParameters } from '../upload-routes.ts';
import { deliveryQueryParameters } from '../webhook-routes.ts';
import { components, type OpenApiDocument } from './answers.ts';
import { type Parameter, sharedResponses } from './path-pieces.ts';
import { apiPaths } from './paths.ts';

/**
 * GET /v1/openapi.json: the HTTP API in OpenAPI 3.1, generated from the zod schemas the
 * gateway writes its records with and parses its queries with (z.toJSONSchema), so the
 * description cannot drift from the code. Answer objects are closed (additionalProperties:
 * false): a field the gateway sends is a field the description names.
 * test/integration/http-openapi.test.ts validates real answers against it.
 */

type JsonSchema = Record<string, unknown>;

/**
 * Tidies what zod emits: a date-time's own regular expression (`format` says it), the bounds
 * of a safe integer, which every JSON number of the API keeps within anyway, and the string
 * keys of a map, which JSON keys always are.
 */
function tidy({ jsonSchema }: { jsonSchema: JsonSchema }): void {
  if (jsonSchema.format === 'date-time') delete jsonSchema.pattern;
  if (isDeepStrictEqual(jsonSchema.propertyNames, { type: 'string' })) delete jsonSchema.propertyNames;
  if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
  if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
}

/** Every component schema, its references pointing into components.schemas. */
function componentSchemas(): Record<string, JsonSchema> {
  const { schemas } = z.toJSONSchema(components, {
    uri: (id) => `#/components/schemas/${id}`,
    override: tidy,
  });
  return Object.fromEntries(
    Object.entries(schemas).map(([id, { $schema: _dialect, $id: _id, ...schema }]) => [id, schema]),
  );
}

/** The query parameters a strict object schema parses, as the request sends them (io: input). */
function queryParameters(schema: z.ZodMiniType): Parameter[] {
  const { properties = {}, required = [] } = z.toJSONSchema(schema, { io: 'input', override: tidy });
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...rest } = property as JsonSchema;
    return {
      name,
      in: 'query',
      ...(description === undefined ? {} : { description }),
      ...(required.includes(name) ? { required: true } : {}),
      schema: rest,
    };
  });
}

/** The document, for the URL clients reach the API at (http.publicUrl, else where it listens). */
export function createOpenApiDocument(serverUrl: string): OpenApiDocument {
  const listed = queryParameters(messageQueryParameters);
  const paging = new Set(['limit', 'cursor', 'wait']);
  return {
    openapi: '3.1.0',
    info: {
      title: 'ingest-gateway',
      version: '1',
      description:
        'Message records, failed uploads and operations of the SMTP ingest gateway. With http.token set, every ' +
        'route but /healthz and /readyz requires `Authorization: Bearer <token>` (or a console session); without one, only ' +
        "requests naming a loopback Host or http.publicUrl's are answered (421 otherwise). Every GET route " +
        'answers HEAD too. A path no route answers is 404 (NotFound), a method a path does not take 405 ' +
        '(MethodNotAllowed). The console (/, /messages/…, /failed, /queues, /login) and Bull Board ' +
        '(/admin/queues) answer HTML for people and are not described here.',
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    servers: [{ url: serverUrl, description: 'http.publicUrl, else the address the API listens on' }],
    security: [{}, { bearer: [] }],
    paths: apiPaths({
      messages: listed,
      events: listed.filter((parameter) => !paging.has(parameter.name)),
      uploads: queryParameters(uploadQueryParameters),
      deliveries: queryParameters(deliveryQueryParameters),
      refusals: queryParameters(refusalQueryParameters),
    }),
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'http.token; needed only when it is set' },
      },
      responses: sharedResponses,
      schemas: componentSchemas(),
    },
  };
}
