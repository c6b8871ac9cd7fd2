import { tagKey } from '../sender/subaddress.ts';
import { renderCustomIdentifier } from './custom-identifier.ts';
import { resolveExpiryTime } from './expiry-time.ts';
import { gatewayCustomIdentifier } from './upload-identity.ts';
import type { UploadWorkspace } from './upload-settings-schema.ts';

/**
 * The form fields of POST /v3/documents for one attachment, encoded as the service expects
 * (docs/parsing-api.md, "Uploading a document"):
 * - names exactly as the service spells them, in the order that section lists them;
 * - booleans as "true"/"false";
 * - `regionBias` as one part of JSON text;
 * - arrays as one part per item: `limitToExamples` the identifier itself, `warningMessages`
 *   the JSON text of each `{warningCode, warningDetail}` (an object is JSON text, as for
 *   regionBias; a list is repeated parts, as for limitToExamples);
 * - null and absent are both left out, so the service's default or the workspace setting
 *   applies.
 * `wait` is always sent and defaults to false: the gateway records the document identifier
 * and does not hold a worker for the whole parse. The deprecated `identifier` and `url` are
 * never sent (the configuration refuses them); `snake_case` is a query parameter, see
 * uploadQuery.
 */

/** What the worker knows about the message and the attachment being uploaded. */
export interface UploadContext {
  /** The sanitised file name: the `fileName` field and the file part's filename. */
  fileName: string;
  /** When the gateway received the message; an expiryTime duration counts from it. */
  receivedAt: Date;
  /** The gateway's id of the message (the 250 reply's). */
  queueId: string;
  /** The Message-ID header without angle brackets, null when absent. */
  messageId: string | null;
  /** The header From address, null when it could not be parsed. */
  from: string | null;
  subject: string | null;
  /** The attachment's position among the message's documents, from 1. */
  attachmentIndex: number;
  /** The entry in the message record: with queueId, the gateway's own customIdentifier. */
  entry: number;
}

export type FormField = [name: string, value: string];

export function uploadFields(workspace: UploadWorkspace, context: UploadContext): FormField[] {
  const upload = workspace.upload ?? {};
  const fields: FormField[] = [['workspace', workspace.identifier]];
  const text = (name: string, value: string | null | undefined) => {
    if (value !== null && value !== undefined) fields.push([name, value]);
  };
  const flag = (name: string, value: boolean | null | undefined) => {
    if (value !== null && value !== undefined) fields.push([name, value ? 'true' : 'false']);
  };

  // The upload block names the form exactly, so it wins over the older workspace-level keys.
  text('collection', upload.collection ?? workspace.collection);
  text('documentType', upload.documentType ?? workspace.documentType);
  text('fileName', context.fileName);
  flag('wait', upload.wait ?? false);
  text('customIdentifier', customIdentifierOf(workspace, context));
  if (upload.expiryTime !== undefined && upload.expiryTime !== null) {
    text('expiryTime', resolveExpiryTime(upload.expiryTime, context.receivedAt));
  }
  text('language', upload.language);
  flag('rejectDuplicates', upload.rejectDuplicates);
  if (upload.regionBias !== undefined) text('regionBias', JSON.stringify(upload.regionBias));
  flag('lowPriority', upload.lowPriority);
  flag('compact', upload.compact);
  flag('deleteAfterParse', upload.deleteAfterParse);
  flag('enableValidationTool', upload.enableValidationTool);
  flag('useOcr', upload.useOcr);
  text('llmHint', upload.llmHint);
  for (const example of upload.limitToExamples ?? []) text('limitToExamples', example);
  for (const warning of upload.warningMessages ?? []) text('warningMessages', JSON.stringify(warning));
  return fields;
}

/**
 * The workspace's template, or the gateway's own identifier of the upload, which lets a retry
 * find the document an earlier attempt created (upload-identity.ts).
 */
export function customIdentifierOf(workspace: UploadWorkspace, context: UploadContext): string {
  const template = workspace.upload?.customIdentifier;
  if (template === undefined) return gatewayCustomIdentifier(context.queueId, context.entry);
  return renderCustomIdentifier(template, {
    messageId: context.messageId ?? '',
    from: context.from ?? '',
    subject: context.subject ?? '',
    attachmentIndex: String(context.attachmentIndex),
    fileName: context.fileName,
    queueId: context.queueId,
    workspace: workspace.identifier,
  });
}

/** The query parameters of the workspace's requests: `snake_case=true` changes the answers' keys. */
export function uploadQuery(workspace: UploadWorkspace): { snakeCase: boolean } {
  return { snakeCase: workspace.upload?.snake_case === true };
}

/**
 * The workspace as an upload addressed with `tag` sees it: the tag's fields over its `upload`
 * block (workspaces[].subaddresses). Unchanged without a tag, or for a tag it lists no fields for.
 */
export function withSubaddress(workspace: UploadWorkspace, tag: string | undefined): UploadWorkspace {
  if (tag === undefined || workspace.subaddresses === undefined) return workspace;
  const key = tagKey(tag);
  const fields = Object.entries(workspace.subaddresses).find(([name]) => tagKey(name) === key)?.[1];
  if (fields === undefined) return workspace;
  return { ...workspace, upload: { ...workspace.upload, ...fields } };
}

/**
 * The workspace as an upload through a document type's address sees it (discovery): its
 * `upload` fields with `documentType` set to that type, over any the workspace or a tag gave:
 * the address names the type. Unchanged without one.
 */
export function withDocumentType(
  workspace: UploadWorkspace,
  documentType: string | undefined,
): UploadWorkspace {
  if (documentType === undefined) return workspace;
  return { ...workspace, upload: { ...workspace.upload, documentType } };
}
