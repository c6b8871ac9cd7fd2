import type { ComponentName } from './answers.ts';

/**
 * What the API's path items are made of (paths.ts, message-paths.ts): references to the
 * components, the answers every route shares, and the path parameters.
 */

export type Json = Record<string, unknown>;
export type Parameter = Json & { name: string };

/** The query parameters of each list, generated from the schemas that parse them (document.ts). */
export interface QueryParameters {
  /** GET /v1/messages: the filters, the page and the long poll. */
  messages: Parameter[];
  /** GET /v1/events: the filters only. */
  events: Parameter[];
  /** GET /v1/uploads. */
  uploads: Parameter[];
  /** GET /v1/webhooks/deliveries. */
  deliveries: Parameter[];
  /** GET /v1/refusals. */
  refusals: Parameter[];
}

export const ref = (name: ComponentName) => ({ $ref: `#/components/schemas/${name}` });
export const answer = (description: string, name: ComponentName) => ({
  description,
  content: { 'application/json': { schema: ref(name) } },
});
export const refusal = (description: string) => answer(description, 'Error');
export const shared = (name: SharedResponse) => ({ $ref: `#/components/responses/${name}` });
export const body = (description: string, type: string) => ({
  description,
  content: { [type]: { schema: { type: 'string' } } },
});

/** Answers a route may give before it is reached, or whatever route it is. */
export const sharedResponses = {
  Unauthorized: {
    description:
      'http.token is set and the request shows neither `Authorization: Bearer <token>` nor a console session',
    headers: { 'WWW-Authenticate': { schema: { const: 'Bearer realm="ingest-gateway"' } } },
    content: { 'application/json': { schema: ref('Error') } },
  },
  CrossOrigin: refusal(
    "A state change from a page of another origin (Origin, Sec-Fetch-Site), or a console session's request without its x-csrf-token",
  ),
  NotFound: refusal('No route answers this path'),
  MethodNotAllowed: {
    description: 'The path does not take this method; Allow lists those it takes',
    headers: { Allow: { schema: { type: 'string' } } },
    content: { 'application/json': { schema: ref('Error') } },
  },
  Misdirected: refusal(
    "Without http.token, a Host that is neither localhost, a loopback address nor http.publicUrl's host (DNS rebinding)",
  ),
  InternalError: refusal('The request failed inside the gateway (Redis unreachable, …); the log says why'),
} as const;
type SharedResponse = keyof typeof sharedResponses;

/** What every route but the probes may answer: the access checks, and a failure. */
export const guarded = {
  '401': shared('Unauthorized'),
  '421': shared('Misdirected'),
  '500': shared('InternalError'),
};
/** The same for a state change, which is refused from other origins too. */
export const changing = { ...guarded, '403': shared('CrossOrigin') };

export const pathParameter = (name: string, description: string, pattern: string) => ({
  name,
  in: 'path',
  required: true,
  description,
  schema: { type: 'string', pattern },
});
export const messageId = pathParameter('id', 'The queue id of the 250 reply', '^[0-9a-z]{1,64}$');
