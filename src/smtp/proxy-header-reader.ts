import type { Socket } from 'node:net';
import { readProxyV2Header } from './proxy-header.ts';

/**
 * What came first on a connection from a load balancer in smtp.proxyProtocolFrom:
 * - `v1`: not a v2 header; every byte read is back on the socket, for smtp-server's v1 reader;
 * - `v2`: a whole v2 header, taken off the socket; what followed it is back on the socket;
 * - `refused`: a broken v2 header; the peer was told and the socket is closing;
 * - `gone`: the peer closed or reset the connection before a whole header.
 */
export type ProxyHeaderOutcome =
  | { kind: 'v1' }
  | { kind: 'v2'; command: 'LOCAL' | 'PROXY'; source: { address: string; port: number } | null }
  | { kind: 'refused'; reason: string }
  | { kind: 'gone'; reason: string };

/** smtp-server's answer to a PROXY header it cannot read, so v1 and v2 peers see the same. */
export const PROXY_REFUSAL_LINE = '* BAD Invalid PROXY header\r\n';

/** Milliseconds a refused socket stays open for its refusal line to be sent (smtp-server's too). */
const REFUSAL_LINGER_MS = 1000;

/**
 * Read the start of `socket` until it is known to be a v2 header or not, and answer once.
 * Bytes are taken as they arrive, so a header cut across TCP segments is read whole. The wait
 * is bounded by the caller (smtp-server's guard closes a socket that sends nothing within
 * smtp.socketTimeout) and the size by proxy-header.ts.
 */
export function readProxyHeader(socket: Socket, done: (outcome: ProxyHeaderOutcome) => void): void {
  let received: Buffer = Buffer.alloc(0);
  let finished = false;

  const finish = (outcome: ProxyHeaderOutcome) => {
    if (finished) return;
    finished = true;
    socket.off('readable', onReadable);
    socket.off('error', onError);
    socket.off('close', onClose);
    socket.off('end', onEnd);
    if (outcome.kind === 'refused' || outcome.kind === 'gone') {
      // A late error (a reset while the refusal is flushed) must find a listener.
      socket.on('error', () => undefined);
      if (outcome.kind === 'refused') {
        socket.end(PROXY_REFUSAL_LINE);
        setTimeout(() => socket.destroy(), REFUSAL_LINGER_MS).unref();
      } else {
        socket.destroy();
      }
    }
    done(outcome);
  };

  const onReadable = () => {
    for (let chunk = socket.read() as Buffer | null; chunk !== null; chunk = socket.read() as Buffer | null) {
      received = received.length === 0 ? chunk : Buffer.concat([received, chunk]);
      const read = readProxyV2Header(received);
      switch (read.kind) {
        case 'incomplete':
          continue;
        case 'not-v2':
          socket.unshift(received);
          return finish({ kind: 'v1' });
        case 'invalid':
          return finish({ kind: 'refused', reason: read.reason });
        case 'header': {
          const rest = received.subarray(read.length);
          if (rest.length > 0) socket.unshift(rest);
          return finish({ kind: 'v2', command: read.command, source: read.source });
        }
      }
    }
  };
  const onError = (err: Error) => finish({ kind: 'gone', reason: err.message });
  const onClose = () => finish({ kind: 'gone', reason: 'closed before a PROXY header' });
  const onEnd = () => finish({ kind: 'gone', reason: 'ended before a PROXY header' });

  socket.on('readable', onReadable);
  socket.on('error', onError);
  socket.on('close', onClose);
  socket.on('end', onEnd);
}
