import { Headers } from '@zone-eu/mailsplit';

/**
 * What the received message's own header says about answering it automatically (RFC 3834
 * section 2): whether it is itself automatic, bulk, or from a mailing list.
 */
export interface LoopHeaders {
  /** The Auto-Submitted value, lower-cased, without comments or parameters; null when absent. */
  autoSubmitted: string | null;
  /** The Precedence value, lower-cased; null when absent. */
  precedence: string | null;
  /** The names (lower-cased) of the List-* fields it carries (RFC 2369, RFC 2919), e.g. list-id. */
  listFields: string[];
}

/** The end of the header block: the first empty line (CRLF CRLF, or bare LF LF); -1 when not in `bytes`. */
export function headerBlockEnd(bytes: Buffer): number {
  const crlf = bytes.indexOf('\r\n\r\n');
  const lf = bytes.indexOf('\n\n');
  if (crlf === -1) return lf === -1 ? -1 : lf + 2;
  return lf === -1 || crlf < lf ? crlf + 4 : lf + 2;
}

/** Reads the loop-relevant fields of a header block (the bytes up to the empty line). */
export function readLoopHeaders(block: Buffer): LoopHeaders {
  const headers = new Headers(block);
  const first = (key: string): string | null => {
    if (!headers.hasHeader(key)) return null;
    // `auto-replied; owner-email="…"` and `auto-generated (comment)`: the keyword is what counts.
    const value = headers.getFirst(key).split(/[;(]/, 1)[0]?.trim().toLowerCase() ?? '';
    return value;
  };
  const listFields = [
    ...new Set(
      headers
        .getList()
        .map((line) => line.key)
        .filter((key) => key.startsWith('list-')),
    ),
  ];
  return { autoSubmitted: first('auto-submitted'), precedence: first('precedence'), listFields };
}
