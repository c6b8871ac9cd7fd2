/**
 * The `snake_case=true` query parameter of the parsing API: the same response with every
 * key in snake_case (README.md, "What it imitates"). Applied recursively, so nested objects
 * such as `meta.workspace` and array items change too.
 */
export function toSnakeCase(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toSnakeCase);
  if (isPlainObject(value)) {
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => [snakeKey(key), toSnakeCase(inner)]),
    );
  }
  return value;
}

/** `readyDt` → `ready_dt`, `isOcrd` → `is_ocrd`, `pdfURL` → `pdf_url`; snake keys stay as they are. */
export function snakeKey(key: string): string {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
