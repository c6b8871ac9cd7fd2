import { parseCustomIdentifier } from './custom-identifier.ts';
import type { UploadWorkspace } from './upload-settings-schema.ts';

/**
 * The `customIdentifier` is how a retry recognises the document an earlier attempt may have
 * created (a worker that died mid-upload, an answer lost to a dropped connection): before
 * uploading again, the worker asks the service for documents with that identifier.
 *
 * That is only safe when the identifier names one upload. The gateway's own identifier,
 * sent when a workspace configures none, is the upload's job id (`<queueId>-<entry>`). A
 * workspace template names one upload when it holds both {queueId} and {attachmentIndex}
 * (the lookup also checks the workspace); any other template could match a different
 * message's document, and treating that as "already uploaded" would drop a document, so
 * detection is off for such a workspace (at-least-once), and the start says so.
 */
export function gatewayCustomIdentifier(queueId: string, entry: number): string {
  return `${queueId}-${entry}`;
}

export function identifiesOneUpload(workspace: UploadWorkspace): boolean {
  const template = workspace.upload?.customIdentifier;
  if (template === undefined) return true;
  const parsed = parseCustomIdentifier(template);
  if (!parsed.ok) return false;
  const names = new Set(
    parsed.pieces.flatMap((piece) => ('placeholder' in piece ? [piece.placeholder] : [])),
  );
  return names.has('queueId') && names.has('attachmentIndex');
}
