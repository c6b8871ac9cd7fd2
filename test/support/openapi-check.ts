import { Ajv2020 } from 'ajv/dist/2020.js';
import formatsModule from 'ajv-formats';

/**
 * Checks HTTP answers against the API's own OpenAPI 3.1 description (GET /v1/openapi.json):
 * the status must be documented for the route and method, and a JSON body must validate
 * against the documented schema (JSON Schema 2020-12, by Ajv). Remembers every route and
 * method it checked, so a test can prove that each documented one was exercised.
 */
export interface OpenApiCheck {
  check(method: string, url: string, response: Response): Promise<unknown>;
  /** Documented `METHOD path` pairs no checked answer came from. */
  unexercised(): string[];
}

interface Operation {
  responses: Record<string, { content?: Record<string, { schema: object }> }>;
}
type PathItem = Record<string, Operation>;

export function createOpenApiCheck(document: { paths: Record<string, PathItem> }): OpenApiCheck {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  // A CommonJS module: imported from ESM, its plugin is the `default` of module.exports.
  formatsModule.default(ajv);
  // The document is the root schema, so its `#/components/schemas/…` refs resolve; its
  // OpenAPI keywords are declared as a vocabulary so strict mode accepts them unevaluated.
  ajv.addVocabulary(['openapi', 'info', 'jsonSchemaDialect', 'security', 'paths', 'components']);
  ajv.addSchema({ $id: 'openapi', ...document });
  const exercised = new Set<string>();
  const templates = Object.keys(document.paths).map((template) => ({
    template,
    pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
  }));

  return {
    async check(method, url, response) {
      const path = new URL(url).pathname;
      const template = templates.find((entry) => entry.pattern.test(path))?.template;
      if (template === undefined) throw new Error(`${method} ${path}: no documented route`);
      const operation = document.paths[template]?.[method.toLowerCase()];
      if (operation === undefined) throw new Error(`${method} ${template}: not documented`);
      exercised.add(`${method.toUpperCase()} ${template}`);
      const documented = operation.responses[String(response.status)];
      if (documented === undefined)
        throw new Error(`${method} ${template}: status ${response.status} not documented`);
      const type = (response.headers.get('content-type') ?? '').split(';')[0]?.trim() ?? '';
      const media = documented.content?.[type];
      if (media === undefined) {
        throw new Error(`${method} ${template} ${response.status}: content type ${type} not documented`);
      }
      if (type !== 'application/json') return response.text();
      const body: unknown = await response.json();
      const pointer = `/paths/${pointerToken(template)}/${method.toLowerCase()}/responses/${response.status}/content/${pointerToken(type)}/schema`;
      const validate = ajv.getSchema(`openapi#${pointer}`);
      if (!validate) throw new Error(`no schema at ${pointer}`);
      if (!validate(body)) {
        throw new Error(`${method} ${path} ${response.status}: ${ajv.errorsText(validate.errors)}`);
      }
      return body;
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

/** A JSON Pointer token (RFC 6901), percent-encoded for use in a URI fragment. */
function pointerToken(token: string): string {
  return encodeURIComponent(token.replaceAll('~', '~0').replaceAll('/', '~1'));
}
