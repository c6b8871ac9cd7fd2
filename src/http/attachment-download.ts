import type { ServerResponse } from 'node:http';
import type { RedisClient } from '../queue/redis-connections.ts';
import { readStoredDocument } from '../queue/stored-document.ts';
import type { KeySpace } from '../record/keys.ts';
import type { MessageLedger } from '../record/message-ledger.ts';
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
 */
export async function sendAttachment(
  res: ServerResponse,
  messageId: string,
  entryNumber: number,
  { redis, keys, ledger }: AttachmentStore,
): Promise<void> {
  const entry = await ledger.readEntry(messageId, entryNumber);
  if (entry === null) return refuse(res, 404, `no attachment ${entryNumber} in message ${messageId}`);
  const headers = {
    'content-type': entry.detectedType ?? 'application/octet-stream',
    'content-disposition': downloadDisposition(entry.originalFileName ?? entry.fileName),
    'x-content-type-options': 'nosniff',
    'content-security-policy': 'sandbox',
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

function whyGone(state: string): string {
  if (state === 'skipped') return 'a skipped part is never kept';
  if (state === 'uploaded' || state === 'rejected') return 'its bytes are released once the service has them';
  return 'the message has expired (retention.messages) or its bytes were released';
}
