/**
 * What an error smtp-server emits on its server object says about the connection. Most are
 * clients doing what clients do: hanging up mid-transaction, probing with a TLS version we
 * do not speak, giving up on a handshake. Those are worth a line at info (who, and why), not
 * an error with a stack; anything else is ours and is logged as an error.
 */

export type ConnectionError =
  | { kind: 'client-gone'; remoteAddress: string | null; code: string }
  | { kind: 'tls-failed'; remoteAddress: string | null; code: string | null; reason: string }
  | { kind: 'internal' };

/** Socket errors of a peer that went away (smtp-server's own list of quiet socket errors). */
const GONE_CODES = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']);

interface SmtpServerErrorShape {
  code?: unknown;
  remoteAddress?: unknown;
  /** Set by smtp-server's normalizeTLSError on every failed TLS setup: `stage: 'connect'`. */
  meta?: { stage?: unknown; message?: unknown; remoteAddress?: unknown };
}

export function classifyConnectionError(err: Error): ConnectionError {
  const shape = err as Error & SmtpServerErrorShape;
  const code = typeof shape.code === 'string' ? shape.code : null;
  const remoteAddress = text(shape.remoteAddress) ?? text(shape.meta?.remoteAddress);
  const tls =
    shape.meta?.stage === 'connect' ||
    code === 'TLSError' ||
    code === 'ERR_TLS_HANDSHAKE_TIMEOUT' ||
    code === 'ERR_TLS_RENEGOTIATION_DISABLED' ||
    (code?.startsWith('ERR_SSL_') ?? false);
  if (tls) {
    // The library's own message is generic; the OpenSSL one it replaced says why.
    const reason = text(shape.meta?.message) ?? err.message;
    return { kind: 'tls-failed', remoteAddress, code, reason };
  }
  if (code !== null && GONE_CODES.has(code)) return { kind: 'client-gone', remoteAddress, code };
  return { kind: 'internal' };
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}
