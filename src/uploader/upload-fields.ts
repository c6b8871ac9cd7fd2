import type { WorkspaceConfig } from '../config/schema.ts';

/**
 * The form fields of POST /v3/documents for one attachment, encoded as the service expects
 * (parsing-api-facts.md): booleans as "true"/"false", arrays as one part per item, objects as
 * JSON text. A null means "the workspace setting applies", so the field is left out.
 * `wait` defaults to false: the gateway records the document identifier and does not hold a
 * worker for the whole parse.
 */
export function uploadFields(workspace: WorkspaceConfig, fileName: string): Array<[string, string]> {
  const fields: Array<[string, string]> = [['workspace', workspace.identifier]];
  if (workspace.collection) fields.push(['collection', workspace.collection]);
  if (workspace.documentType) fields.push(['documentType', workspace.documentType]);
  fields.push(['fileName', fileName]);
  const extra: Record<string, unknown> = { ...(workspace.upload ?? {}) };
  fields.push(['wait', encode(extra.wait ?? false)]);
  delete extra.wait;
  for (const [name, value] of Object.entries(extra)) {
    if (value === null || value === undefined) continue;
    if (Array.isArray(value)) for (const item of value) fields.push([name, encode(item)]);
    else fields.push([name, encode(value)]);
  }
  return fields;
}

function encode(value: unknown): string {
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  return JSON.stringify(value);
}
