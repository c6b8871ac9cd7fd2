/**
 * SMTP smuggling (SEC Consult, December 2023): a sending server that passes `<LF>.<LF>` or
 * `<CR>.<CR>` through unchanged lets its user end DATA at a receiver that reads such a
 * sequence as the end of the message, and the bytes after it run as a second transaction
 * with the first one's authority (SPF, DKIM of the relaying server). smtp-server ends DATA at
 * CRLF.CRLF only, but a message holding a bare CR or LF is exactly what a smuggling attempt
 * looks like, and RFC 5321 2.3.8 allows neither outside a CRLF pair, so the gateway refuses
 * it (as Postfix's smtpd_forbid_bare_newline and Exim since 4.97 do).
 */

const CR = 0x0d;
const LF = 0x0a;

export interface BareLineEndingScanner {
  /**
   * Scan the next chunk of DATA (as smtp-server emits it, dot-unstuffed). Returns what was
   * found first, `'cr'` or `'lf'`, or null. A CR at the end of a chunk is judged by the
   * first byte of the next one.
   */
  push(chunk: Buffer): 'cr' | 'lf' | null;
  /** DATA has ended: a CR still waiting for its LF is bare. */
  end(): 'cr' | null;
}

/**
 * A scanner keeping one bit of state between chunks. It searches with Buffer.indexOf (native
 * memchr), so a 25 MB message costs one call per line, never a JavaScript loop per byte.
 */
export function createBareLineEndingScanner(): BareLineEndingScanner {
  let pendingCr = false;

  return {
    push(chunk) {
      if (chunk.length === 0) return null;
      let from = 0;
      if (pendingCr) {
        if (chunk[0] !== LF) return 'cr';
        pendingCr = false;
        from = 1;
      }
      // Every LF must follow a CR, every CR must precede an LF: check each line end in turn.
      for (;;) {
        const lf = chunk.indexOf(LF, from);
        const cr = chunk.indexOf(CR, from);
        if (cr === -1 && lf === -1) return null;
        if (cr === -1 || (lf !== -1 && lf < cr)) return 'lf';
        // The first of the two is a CR: it must be followed by an LF.
        if (cr === chunk.length - 1) {
          pendingCr = true;
          return null;
        }
        if (chunk[cr + 1] !== LF) return 'cr';
        from = cr + 2;
      }
    },
    end() {
      return pendingCr ? 'cr' : null;
    },
  };
}

/** The reply text naming what was found. */
export function describeBareLineEnding(found: 'cr' | 'lf'): string {
  const what = found === 'cr' ? 'CR' : 'LF';
  return `message refused: bare ${what} in DATA; lines must end with CRLF (RFC 5321 2.3.8)`;
}
