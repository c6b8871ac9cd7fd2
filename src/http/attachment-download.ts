import type { ServerResponse } from 'node:http';
import type { KeySpace } from '../record/keys.ts';
import type { MessageLedger } from '../record/message-ledger.ts';
import type { RedisClient } from '../redis/connections.ts';
import { readStoredDocument } from '../store/stored-document.ts';
import { refuse } from './respond.ts';
import { downloadDisposition, sendStoredBytes } from './stored-bytes.ts';

export interface AttachmentStore {
  redis: RedisClient;
  keys: KeySpace;
  ledger: MessageLedger;
}

/**
 * GET /v1/messages/{id}/attachments/{entry}: the stored bytes of one attachment, typed as the
 * gateway detected them and always as a download: the bytes came by mail, and must not run
 * as a page of this origin. A document's bytes (stored-document.ts) live until every upload of it succeeded (blob-release.ts)
 * or the message expires; after that the answer is 410 and says so.
 *
 * `inline` (the console's preview of an image or a PDF the gateway detected as such): shown in
 * place rather than downloaded, and without the sandbox, which Chromium's PDF viewer refuses
 * to run in; the detected type with nosniff still keeps the bytes from being read as a page.
 */
export async function sendAttachment(
  res: ServerResponse,
  messageId: string,
  entryNumber: number,
  { redis, keys, ledger }: AttachmentStore,
  inline = false,
): Promise<void> {
  const entry = await ledger.readEntry(messageId, entryNumber);
  if (entry === null) return refuse(res, 404, `no attachment ${entryNumber} in message ${messageId}`);
  if (inline && !previewable(entry.detectedType)) {
    return refuse(res, 404, `attachment ${entryNumber} of message ${messageId} has no preview`);
  }
  const headers = {
    'content-type': entry.detectedType ?? 'application/octet-stream',
    'content-disposition': inline ? 'inline' : downloadDisposition(entry.originalFileName ?? entry.fileName),
    'x-content-type-options': 'nosniff',
    'content-security-policy': inline ? "default-src 'none'; frame-ancestors 'self'" : 'sandbox',
    ...(inline ? { 'x-frame-options': 'SAMEORIGIN', 'cache-control': 'no-store' } : {}),
  };
  // A blob of its own is streamed as it is stored; a span of the raw copy is decoded first.
  if (await sendStoredBytes(res, redis, keys.message(messageId).blob(entry.sha256), headers)) return;
  const decoded = await readStoredDocument(redis, keys, { messageId, sha256: entry.sha256 });
  if (decoded !== null) {
    res.writeHead(200, { ...headers, 'content-length': String(decoded.length) });
    res.end(decoded);
    return;
  }
  refuse(
    res,
    410,
    `attachment ${entryNumber} of message ${messageId} is no longer stored: ${whyGone(entry.state)}`,
  );
}

/** Types the console previews: images in an <img>, PDFs in a frame. SVG is not one (it runs script). */
export function previewable(detectedType: string | null): boolean {
  return (
    detectedType === 'application/pdf' ||
    (detectedType !== null && /^image\/(png|jpeg|gif|webp|bmp|tiff)$/.test(detectedType))
  );
}

function whyGone(state: string): string {
  if (state === 'skipped') return 'a skipped part is never kept';
  if (state === 'uploaded' || state === 'rejected') return 'its bytes are released once the service has them';
  return 'the message has expired (retention.messages) or its bytes were released';
}
