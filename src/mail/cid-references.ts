/**
 * Finds the `cid:` URLs (RFC 2392) an HTML body refers to, as its decoded bytes stream
 * past, so that images the body shows inline are not mistaken for documents.
 */

/**
 * How much of one HTML body is scanned, in bytes. Clients put the <img src="cid:...">
 * of a signature logo or a pasted picture in the first few hundred KiB of even long
 * newsletters; scanning more would spend CPU on every byte of an oversized body for a
 * decision that only moves an image from "skipped" to "uploaded".
 */
export const MAX_HTML_SCAN_BYTES = 2 * 1024 * 1024;

/**
 * The longest Content-ID recognised, in characters. RFC 5322 message ids fit in a line
 * (998); real ones (Outlook's `image001.png@01D9C0A1.2B3C4D50`) are under 100. It bounds the
 * tail kept between chunks.
 */
const MAX_CID_LENGTH = 998;

const PREFIX_LENGTH = 'cid:'.length;

/**
 * A cid: URL ends where an HTML attribute value or CSS url() would: at whitespace, a quote,
 * a bracket or an entity.
 */
const CID_URL = /cid:([^\s"'<>()&\\]+)/gi;

export interface CidScanner {
  /** Scan the next decoded chunk of the body. */
  push(chunk: Buffer): void;
  /** The body has ended: a reference cut off by the end of the last chunk counts now. */
  end(): void;
}

/**
 * Adds every Content-ID referenced by the HTML to `found`, lower-cased and percent-decoded
 * as RFC 2392 says (so it compares with a part's Content-ID lower-cased). Lower-casing
 * makes the match lenient: a sender that changes case between the two is matched rather
 * than having its logo uploaded as a document.
 *
 * Bytes are read as latin1: `cid:` URLs are ASCII in any charset a mail body uses (UTF-16
 * bodies are not scanned; they do not occur in practice).
 */
export function createCidScanner(found: Set<string>, maxBytes = MAX_HTML_SCAN_BYTES): CidScanner {
  let tail = '';
  let scanned = 0;

  const scan = (text: string, final: boolean) => {
    for (const match of text.matchAll(CID_URL)) {
      const value = match[1];
      // A match that runs to the end of the text may continue in the next chunk.
      if (value === undefined || (!final && match.index + match[0].length === text.length)) continue;
      if (value.length <= MAX_CID_LENGTH) found.add(decodeCid(value));
    }
  };

  return {
    push(chunk) {
      if (scanned >= maxBytes) return;
      const take = chunk.subarray(0, maxBytes - scanned);
      scanned += take.length;
      const text = tail + take.toString('latin1');
      scan(text, false);
      // Matches wholly inside the tail are found again next time; the set keeps each once.
      tail = text.slice(-(MAX_CID_LENGTH + PREFIX_LENGTH));
    },
    end() {
      scan(tail, true);
      tail = '';
    },
  };
}

function decodeCid(value: string): string {
  try {
    return decodeURIComponent(value).toLowerCase();
  } catch {
    // A malformed %-escape: compare the URL as written.
    return value.toLowerCase();
  }
}
