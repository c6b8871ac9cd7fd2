import { createHash } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import libmime from 'libmime';
import { createCidScanner } from './cid-references.ts';
import type { CollectContext } from './collect-leaf.ts';
import type { LeafDescription } from './describe-leaf.ts';
import type { LeafPart } from './leaf-part.ts';
import type { PartWriter } from './part-store.ts';

/**
 * The UTF-8 byte order mark an HTML body document starts with. The HTML standard's encoding
 * sniffing (WHATWG HTML 13.2.3.1) reads a BOM before anything else and then ignores every
 * `<meta charset>`, so the document the mail wrote as `<meta charset="iso-8859-1">` is read
 * as the UTF-8 it now is, and its markup stays as written. A `<meta>` put in front of the
 * document instead would come before its `<!DOCTYPE>` and put it in quirks mode; rewriting
 * the document's own would mean parsing HTML on the DATA path.
 */
const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * Read a body of the top-level message that a workspace takes as a document (bodyAsDocument):
 * decode it from its MIME charset into UTF-8 as it streams (libmime's decoder, the one
 * mailparser uses: ISO-8859-1 is read as windows-1252, as mail clients read it; no charset
 * and unknown ones as UTF-8, invalid bytes becoming U+FFFD) and store the UTF-8 bytes; size
 * and sha256 are theirs. An HTML body also starts with UTF8_BOM and is scanned for cid:
 * references as any HTML body is.
 *
 * A body over maxPartSize, as sent or in UTF-8, is not stored (decide() records why). The
 * bound also caps what the decoder holds: libmime decodes the Japanese charsets (ISO-2022-JP
 * is stateful) only once their input ends, so it is fed at most maxPartSize bytes.
 */
export async function collectBody(
  decoded: AsyncIterable<Buffer>,
  leaf: LeafDescription & { index: number; depth: number },
  context: CollectContext,
): Promise<LeafPart> {
  const html = leaf.declaredType === 'text/html';
  const cids = html ? createCidScanner(context.htmlCids) : null;
  const hash = createHash('sha256');
  let sent = 0;
  let size = 0;
  let tooLarge = false;
  // Assigned inside the pipeline's last step, which the compiler's flow analysis cannot see.
  let writer = null as PartWriter | null;

  // Past the bound, the rest is read (the walk must go on) but no longer decoded.
  async function* bounded(source: AsyncIterable<Buffer>) {
    for await (const chunk of source) {
      sent += chunk.length;
      cids?.push(chunk);
      if (sent > context.maxPartSize) tooLarge = true;
      if (!tooLarge) yield chunk;
    }
  }
  const store = async (utf8: AsyncIterable<Buffer>) => {
    for await (const text of utf8) {
      if (tooLarge) continue;
      const chunk = size === 0 && html ? withoutBom(text) : text;
      const out = size === 0 && html ? Buffer.concat([UTF8_BOM, chunk]) : chunk;
      if (out.length === 0) continue;
      size += out.length;
      if (size > context.maxPartSize) {
        tooLarge = true;
        continue;
      }
      hash.update(out);
      writer ??= context.store.openPart(leaf.index, 'document');
      await writer.write(out);
    }
  };

  try {
    await pipeline(decoded, bounded, libmime.createDecodeStream(leaf.charset ?? undefined), store);
    cids?.end();
    if (writer !== null && tooLarge) await discardQuietly(writer);
    else if (writer !== null) await writer.end();
  } catch (err) {
    if (writer !== null) await discardQuietly(writer);
    throw err;
  }

  const stored = writer !== null && !tooLarge;
  return {
    index: leaf.index,
    partNumber: leaf.partNumber,
    declaredType: leaf.declaredType,
    disposition: leaf.disposition,
    fileName: null,
    contentId: leaf.contentId,
    depth: leaf.depth,
    role: 'body',
    size: stored ? size : sent,
    sha256: stored ? hash.digest('hex') : '',
    detectedType: stored ? (html ? 'html' : 'txt') : null,
    bytesType: null,
    stored,
    exclusion: leaf.exclusion,
    textContent: false,
    path: `body (${leaf.declaredType})`,
    container: null,
    inArchive: false,
  };
}

/** The text without a BOM of its own (a UTF-8 body may carry one), so the document has one. */
function withoutBom(text: Buffer): Buffer {
  return text.subarray(0, 3).equals(UTF8_BOM) ? text.subarray(3) : text;
}

/** As in collect-leaf.ts: the walk's own error is what the caller acts on. */
async function discardQuietly(writer: PartWriter): Promise<void> {
  await Promise.allSettled([writer.discard()]);
}
