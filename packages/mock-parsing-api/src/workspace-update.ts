import type { RequestErrorBody } from './request-error.ts';
import { VISIBILITIES, type Visibility, type WorkspacePatch } from './workspace-shape.ts';

/**
 * The check of a `PATCH /v3/workspaces/{identifier}` body (README.md, "Workspace reads and
 * updates") as a Django REST framework serializer makes it: field by field, every problem
 * reported at once in one RequestError, each naming its field in `attr` (list items as
 * `documentTypes.1`). Only the WorkspaceUpdate fields may be sent: a read-only Workspace
 * field (`ingestEmail`, which the service generates) and an unknown one are refused rather
 * than ignored, so a client's typo shows at once. Pure: the handler does the I/O.
 */

export type WorkspaceUpdateValidation =
  | { ok: true; patch: WorkspacePatch }
  | { ok: false; error: RequestErrorBody };

type FieldError = RequestErrorBody['errors'][number];

/** Fields of the Workspace that a response has and an update may not set. */
const READ_ONLY = new Set([
  'identifier',
  'organization',
  'collections',
  'members',
  'unvalidatedDocsCount',
  'confirmedDocsCount',
  'ingestEmail',
]);

/** A CharField's default maximum in the service's Django models, in characters. */
const MAX_NAME_CHARS = 255;

/** `*@example.com` or `ap@example.com`: one `@`, something either side, no whitespace. */
const ALLOW_LIST_ENTRY = /^[^@\s]+@[^@\s]+$/;

/**
 * @param snakeCase the request's `snake_case=true`: the body may then name fields in
 *   snake_case too (`reject_duplicates`), as the service's camel-case parser accepts.
 */
export function validateWorkspaceUpdate(body: unknown, snakeCase: boolean): WorkspaceUpdateValidation {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    const got = body === null ? 'null' : Array.isArray(body) ? 'list' : typeof body;
    return fail([
      { attr: null, code: 'invalid', detail: `Invalid data. Expected a dictionary, but got ${got}.` },
    ]);
  }
  const patch: WorkspacePatch = {};
  const errors: FieldError[] = [];
  const given = new Set<string>();
  for (const [key, value] of Object.entries(body)) {
    const field = fieldName(key, snakeCase);
    if (given.has(field)) {
      errors.push({ attr: key, code: 'invalid', detail: `The field ${field} is given twice.` });
      continue;
    }
    given.add(field);
    const error = (code: string, detail: string) => errors.push({ attr: key, code, detail });
    switch (field) {
      case 'name':
        if (value === null) error('null', 'This field may not be null.');
        else if (typeof value !== 'string') error('invalid', 'Not a valid string.');
        else if (value.trim() === '') error('blank', 'This field may not be blank.');
        else if (value.length > MAX_NAME_CHARS)
          error('max_length', `Ensure this field has no more than ${MAX_NAME_CHARS} characters.`);
        else patch.name = value;
        break;
      case 'visibility':
        if (value === null) error('null', 'This field may not be null.');
        else if (!isVisibility(value)) error('invalid_choice', `"${String(value)}" is not a valid choice.`);
        else patch.visibility = value;
        break;
      case 'rejectInvalidDocuments':
        if (value === null) error('null', 'This field may not be null.');
        else if (typeof value !== 'boolean') error('invalid', 'Must be a valid boolean.');
        else patch.rejectInvalidDocuments = value;
        break;
      case 'rejectDuplicates':
        if (value !== null && typeof value !== 'boolean') error('invalid', 'Must be a valid boolean.');
        else patch.rejectDuplicates = value;
        break;
      case 'documentTypes': {
        if (value === null) {
          error('null', 'This field may not be null.');
          break;
        }
        const list = stringList(key, value, errors, () => true, '');
        if (list) patch.documentTypes = list;
        break;
      }
      case 'whitelistIngestAddresses': {
        if (value === null) {
          patch.whitelistIngestAddresses = null;
          break;
        }
        const list = stringList(
          key,
          value,
          errors,
          (entry) => ALLOW_LIST_ENTRY.test(entry),
          'Enter a valid e-mail address or a wildcard like *@example.com.',
        );
        if (list) patch.whitelistIngestAddresses = list;
        break;
      }
      case 'documentSplitter':
        if (value === null) error('null', 'This field may not be null.');
        else if (typeof value !== 'string') error('incorrect_type', 'Incorrect type. Expected pk value.');
        else if (value.trim() === '') error('blank', 'This field may not be blank.');
        else patch.documentSplitter = value;
        break;
      default:
        if (READ_ONLY.has(field)) error('read_only', 'This field is read-only.');
        else error('unknown_field', 'Unknown field.');
    }
  }
  return errors.length > 0 ? fail(errors) : { ok: true, patch };
}

/** The field a key names: itself, or with snake_case=true the camelCase field it spells. */
function fieldName(key: string, snakeCase: boolean): string {
  if (!snakeCase || !key.includes('_')) return key;
  return key.replace(/_([a-z0-9])/g, (_match, letter: string) => letter.toUpperCase());
}

function isVisibility(value: unknown): value is Visibility {
  return typeof value === 'string' && (VISIBILITIES as readonly string[]).includes(value);
}

/** A list of non-blank strings each passing `valid`; undefined (errors added) otherwise. */
function stringList(
  attr: string,
  value: unknown,
  errors: FieldError[],
  valid: (entry: string) => boolean,
  invalidDetail: string,
): string[] | undefined {
  if (!Array.isArray(value)) {
    const got = typeof value === 'string' ? 'str' : typeof value;
    errors.push({ attr, code: 'not_a_list', detail: `Expected a list of items but got type "${got}".` });
    return undefined;
  }
  const before = errors.length;
  const list: string[] = [];
  value.forEach((entry: unknown, index) => {
    const error = (code: string, detail: string) => errors.push({ attr: `${attr}.${index}`, code, detail });
    if (typeof entry !== 'string') error('invalid', 'Not a valid string.');
    else if (entry.trim() === '') error('blank', 'This field may not be blank.');
    else if (!valid(entry)) error('invalid', invalidDetail);
    else list.push(entry);
  });
  return errors.length === before ? list : undefined;
}

function fail(errors: FieldError[]): WorkspaceUpdateValidation {
  return { ok: false, error: { type: 'validation_error', errors } };
}
