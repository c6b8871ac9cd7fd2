import { RefusalError } from '../errors.ts';

/**
 * Each DKIM-Signature (and ARC-Message-Signature) makes mailauth hash the body once more with
 * that signature's canonicalisation and length, so their number multiplies the work one
 * message costs: 450 signatures on a 21 MiB body took 6.7 s of CPU. Real mail carries a few
 * (the author's domain, an ESP, a list or two). The guard counts them in the top-level
 * header block as the bytes stream past (pure, incremental, constant memory) and refuses the
 * message past the cap, before any is verified.
 */
export const MAX_SIGNATURES = 16;

const names = ['dkim-signature:', 'arc-message-signature:'];
/** Longest header name to recognise, in bytes: the prefix kept across chunk boundaries. */
const longest = Math.max(...names.map((name) => name.length));

export interface SignatureGuard {
  /** Scans a chunk; returns the refusal once the cap is passed (and every time after). */
  push(chunk: Buffer): RefusalError | null;
  readonly refusal: RefusalError | null;
}

export function createSignatureGuard(max = MAX_SIGNATURES): SignatureGuard {
  let count = 0;
  let inHeader = true;
  /** The start of the current line, lower-cased, up to `longest` bytes; null mid-line past it. */
  let line: string | null = '';
  let refusal: RefusalError | null = null;

  return {
    get refusal() {
      return refusal;
    },
    push(chunk) {
      if (refusal || !inHeader) return refusal;
      for (let i = 0; i < chunk.length && inHeader; i++) {
        const byte = chunk[i] ?? 0;
        if (byte === 0x0a) {
          // An empty line (LF or CRLF) ends the header block.
          if (line === '' || line === '\r') inHeader = false;
          line = '';
          continue;
        }
        if (line === null) continue;
        if (byte === 0x0d && line === '') {
          // Perhaps the CR of a blank line: the LF that follows decides.
          line = '\r';
          continue;
        }
        line += String.fromCharCode(byte).toLowerCase();
        if (names.includes(line)) {
          count++;
          line = null;
          if (count > max) {
            refusal = new RefusalError(
              'SENDER_NOT_AUTHENTICATED',
              `sender not authenticated: more than ${max} DKIM or ARC signatures, none was checked`,
            );
            return refusal;
          }
        } else if (line.length >= longest || !names.some((name) => name.startsWith(line ?? ''))) {
          line = null;
        }
      }
      return refusal;
    },
  };
}
