import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import formatsModule from 'ajv-formats';

/**
 * Checks HTTP answers against the API's own OpenAPI 3.1 description (GET /v1/openapi.json):
 * the status must be documented for the route and method, a documented header must be sent
 * and match, and a JSON body must validate against the documented schema (JSON Schema
 * 2020-12, by Ajv). An answer for a path or method no route takes must be one of the shared
 * answers (NotFound, MethodNotAllowed, Unauthorized, …); a 405's Allow header must list
 * exactly the methods the description gives the path. Remembers every route and method
 * it checked, so a test can prove that each documented one was exercised.
 */
export interface OpenApiCheck {
  check(method: string, url: string, response: Response): Promise<unknown>;
  /** Validates a value against one component schema (e.g. an event's data against Message). */
  conforms(component: string, value: unknown): void;
  /** Documented `METHOD path` pairs no checked answer came from. */
  unexercised(): string[];
}

interface MediaType {
  schema: object;
}
interface ResponseObject {
  $ref?: string;
  headers?: Record<string, { schema: object }>;
  content?: Record<string, MediaType>;
}
interface Operation {
  responses: Record<string, ResponseObject>;
}
type PathItem = Record<string, Operation>;
export interface OpenApiDocument {
  paths: Record<string, PathItem>;
  components: { responses: Record<string, ResponseObject>; schemas: Record<string, object> };
}

/** The shared answers (components.responses) by status: what any path may answer. */
const sharedAnswers: Record<number, string> = {
  401: 'Unauthorized',
  403: 'CrossOrigin',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  421: 'Misdirected',
  500: 'InternalError',
};

export function createOpenApiCheck(document: OpenApiDocument): OpenApiCheck {
  const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true });
  // A CommonJS module: imported from ESM, its plugin is the `default` of module.exports.
  formatsModule.default(ajv);
  // The document is the root schema, so its `#/components/schemas/…` refs resolve; its
  // OpenAPI keywords are declared as a vocabulary so strict mode accepts them unevaluated.
  ajv.addVocabulary(['openapi', 'info', 'jsonSchemaDialect', 'servers', 'security', 'paths', 'components']);
  ajv.addSchema({ $id: 'openapi', ...document });
  const validator = (pointer: string): ValidateFunction => {
    const validate = ajv.getSchema(`openapi#${pointer}`);
    if (!validate) throw new Error(`no schema at ${pointer}`);
    return validate;
  };
  const exercised = new Set<string>();
  const templates = Object.keys(document.paths).map((template) => ({
    template,
    pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
  }));

  /** The response object and its JSON pointer, following a `$ref` into components.responses. */
  function resolve(documented: ResponseObject, pointer: string): { answer: ResponseObject; pointer: string } {
    const name = documented.$ref?.replace('#/components/responses/', '');
    if (name === undefined) return { answer: documented, pointer };
    const answer = document.components.responses[name];
    if (answer === undefined) throw new Error(`${documented.$ref}: no such response`);
    return { answer, pointer: `/components/responses/${pointerToken(name)}` };
  }

  async function conform(label: string, response: Response, answer: ResponseObject, pointer: string) {
    for (const [name, header] of Object.entries(answer.headers ?? {})) {
      const value = response.headers.get(name);
      if (value === null) throw new Error(`${label}: documented header ${name} missing`);
      const validate = ajv.compile(header.schema);
      if (!validate(value)) throw new Error(`${label}: header ${name}: ${ajv.errorsText(validate.errors)}`);
    }
    const type = (response.headers.get('content-type') ?? '').split(';')[0]?.trim() ?? '';
    const media = answer.content?.[type] ?? answer.content?.['*/*'];
    if (media === undefined) throw new Error(`${label}: content type ${type} not documented`);
    if (type !== 'application/json') return response.text();
    const body: unknown = await response.json();
    const validate = validator(`${pointer}/content/${pointerToken('application/json')}/schema`);
    if (!validate(body)) throw new Error(`${label}: ${ajv.errorsText(validate.errors)}`);
    return body;
  }

  return {
    async check(method, url, response) {
      const path = new URL(url).pathname;
      const template = templates.find((entry) => entry.pattern.test(path))?.template;
      const label = `${method} ${path} ${response.status}`;
      /** An answer given before a route is chosen, or for a path or method no route takes. */
      const shared = () => {
        const name = sharedAnswers[response.status];
        if (name === undefined) throw new Error(`${label}: no documented route or method answers so`);
        const { answer, pointer } = resolve({ $ref: `#/components/responses/${name}` }, '');
        return conform(label, response, answer, pointer);
      };
      if (template === undefined) return shared();
      const item = document.paths[template] ?? {};
      const operation = item[method.toLowerCase()];
      if (operation === undefined) {
        if (response.status === 405) {
          const documented = Object.keys(item).map((name) => name.toUpperCase());
          const allowed = [...documented, ...(documented.includes('GET') ? ['HEAD'] : [])];
          const allow = (response.headers.get('allow') ?? '').split(/,\s*/);
          if (allow.toSorted().join() !== allowed.toSorted().join()) {
            throw new Error(`${label}: Allow ${allow.join(', ')}, documented ${allowed.join(', ')}`);
          }
        } else if (response.status === 404) {
          throw new Error(`${label}: a documented path answered 404 for a method it does not take`);
        }
        return shared();
      }
      exercised.add(`${method.toUpperCase()} ${template}`);
      const documented = operation.responses[String(response.status)];
      if (documented === undefined) throw new Error(`${label}: status not documented for ${template}`);
      const base = `/paths/${pointerToken(template)}/${method.toLowerCase()}/responses/${response.status}`;
      const { answer, pointer } = resolve(documented, base);
      return conform(label, response, answer, pointer);
    },
    conforms(component, value) {
      const validate = validator(`/components/schemas/${pointerToken(component)}`);
      if (!validate(value)) throw new Error(`${component}: ${ajv.errorsText(validate.errors)}`);
    },
    unexercised() {
      return Object.entries(document.paths).flatMap(([template, item]) =>
        Object.keys(item)
          .map((method) => `${method.toUpperCase()} ${template}`)
          .filter((name) => !exercised.has(name)),
      );
    },
  };
}

/**
 * JSON Pointers of the object schemas in the document that let unnamed properties through:
 * those with `properties` but without `additionalProperties: false`.
 */
export function openObjects(node: unknown, pointer = ''): string[] {
  if (node === null || typeof node !== 'object') return [];
  const here =
    'properties' in node && (node as { additionalProperties?: unknown }).additionalProperties !== false
      ? [pointer]
      : [];
  return [
    ...here,
    ...Object.entries(node).flatMap(([key, value]) => openObjects(value, `${pointer}/${pointerToken(key)}`)),
  ];
}

/** A JSON Pointer token (RFC 6901), percent-encoded for use in a URI fragment. */
function pointerToken(token: string): string {
  return encodeURIComponent(token.replaceAll('~', '~0').replaceAll('/', '~1'));
}
