import { createHash } from 'node:crypto';
import type { NewDocument } from './document-store.ts';
import type { MultipartForm } from './read-multipart.ts';
import { type RequestErrorBody, validationError } from './request-error.ts';
import { checkSupportedType, type TypeCheck } from './supported-type.ts';

/**
 * The checks the service makes on the form of `POST /v3/documents` (README.md, "The
 * upload") before it creates a document, each failing with a 400 `validation_error` that
 * names the field in `attr`, as a Django REST framework serializer would. Whether the
 * file's type is supported is reported, not refused here: a workspace with
 * `rejectInvalidDocuments` turns it into a rejected document instead of a 400
 * (process-document.ts).
 */

export interface ValidUpload {
  wait: boolean;
  deleteAfterParse: boolean;
  /** The form's `rejectDuplicates`; undefined when absent (the workspace's setting applies). */
  rejectDuplicates: boolean | undefined;
  document: NewDocument;
  /** The uploaded file and what its bytes are; null for an upload by `url`. */
  file: { bytes: Buffer; type: TypeCheck } | null;
}

export type UploadValidation = { ok: true; upload: ValidUpload } | { ok: false; error: RequestErrorBody };

/** The upload form's boolean fields. */
const BOOLEAN_FIELDS = [
  'wait',
  'rejectDuplicates',
  'lowPriority',
  'compact',
  'deleteAfterParse',
  'enableValidationTool',
  'useOcr',
] as const;

/** The spellings DRF's BooleanField takes; the service's clients send "true" and "false". */
const TRUE_WORDS = new Set(['true', '1', 'yes', 'on']);
const FALSE_WORDS = new Set(['false', '0', 'no', 'off']);

export async function validateUpload(form: MultipartForm): Promise<UploadValidation> {
  const field = (name: string): string | undefined => {
    // Like Django's QueryDict, a repeated single-valued field counts by its last value.
    const value = form.fields[name]?.at(-1);
    return value === undefined || value === '' ? undefined : value;
  };
  const booleans = new Map<string, boolean>();
  for (const name of BOOLEAN_FIELDS) {
    const raw = field(name);
    if (raw === undefined) continue;
    const lower = raw.toLowerCase();
    if (!TRUE_WORDS.has(lower) && !FALSE_WORDS.has(lower)) {
      return invalid(name, 'invalid', 'Must be a valid boolean.');
    }
    booleans.set(name, TRUE_WORDS.has(lower));
  }
  const wait = booleans.get('wait') ?? true;
  if (booleans.get('deleteAfterParse') === true && !wait) {
    return invalid(null, 'invalid', 'deleteAfterParse is only compatible with wait=true.');
  }
  const expiryTime = field('expiryTime');
  if (expiryTime !== undefined && Number.isNaN(Date.parse(expiryTime))) {
    return invalid('expiryTime', 'invalid', 'Datetime has wrong format.');
  }
  const regionBias = field('regionBias');
  if (regionBias !== undefined && !isJsonObject(regionBias)) {
    return invalid('regionBias', 'invalid', 'Must be a JSON object.');
  }

  const url = field('url');
  const { file } = form;
  if (file !== null && url !== undefined)
    return invalid(null, 'invalid', 'Give either file or url, not both.');
  if (file === null && url === undefined)
    return invalid(null, 'invalid', 'Either file or url must be given.');
  let fileName = field('fileName') ?? null;
  let sha256: string | null = null;
  let checked: ValidUpload['file'] = null;
  if (file !== null) {
    if (file.bytes.length === 0) return invalid('file', 'empty', 'The submitted file is empty.');
    const type = await checkSupportedType(file.bytes, file.contentType, fileName ?? file.fileName);
    checked = { bytes: file.bytes, type };
    fileName ??= file.fileName === '' ? null : file.fileName;
    sha256 = createHash('sha256').update(file.bytes).digest('hex');
  } else if (url !== undefined) {
    const parsed = URL.parse(url);
    if (parsed === null || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) {
      return invalid('url', 'invalid', 'Enter a valid URL.');
    }
    // The mock does not download: the name is the URL's last path segment.
    fileName ??= lastPathSegment(parsed);
  }

  return {
    ok: true,
    upload: {
      wait,
      deleteAfterParse: booleans.get('deleteAfterParse') ?? false,
      rejectDuplicates: booleans.get('rejectDuplicates'),
      file: checked,
      document: {
        fileName,
        // `identifier` is the deprecated name of `customIdentifier`, still taken.
        customIdentifier: field('customIdentifier') ?? field('identifier') ?? null,
        workspace: field('workspace') ?? null,
        collection: field('collection') ?? null,
        documentType: field('documentType') ?? null,
        language: field('language') ?? null,
        expiryTime: expiryTime ?? null,
        sha256,
      },
    },
  };
}

function invalid(attr: string | null, code: string, detail: string): UploadValidation {
  return { ok: false, error: validationError(attr, code, detail) };
}

function lastPathSegment(url: URL): string | null {
  const segment = url.pathname.split('/').at(-1) ?? '';
  try {
    return decodeURIComponent(segment) || null;
  } catch {
    // A malformed %-escape: the name as written is still a name.
    return segment || null;
  }
}

function isJsonObject(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value);
  } catch {
    return false;
  }
}
