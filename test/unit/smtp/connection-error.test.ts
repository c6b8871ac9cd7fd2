import { describe, expect, it } from 'vitest';
import { classifyConnectionError } from '../../../src/smtp/connection-error.ts';

const error = (message: string, fields: Record<string, unknown>): Error =>
  Object.assign(new Error(message), fields);

describe('classifyConnectionError', () => {
  it.each([
    {
      name: 'a client that reset mid-transaction',
      err: error('read ECONNRESET', { code: 'ECONNRESET', remoteAddress: '192.0.2.1' }),
      seen: { kind: 'client-gone', remoteAddress: '192.0.2.1', code: 'ECONNRESET' },
    },
    {
      name: 'a write to a client that left',
      err: error('write EPIPE', { code: 'EPIPE', remoteAddress: '192.0.2.2' }),
      seen: { kind: 'client-gone', remoteAddress: '192.0.2.2', code: 'EPIPE' },
    },
    {
      name: 'a handshake smtp-server normalised, with the OpenSSL reason',
      err: error('Failed to establish TLS session', {
        code: 'TLSError',
        remoteAddress: '192.0.2.3',
        meta: {
          stage: 'connect',
          protocol: 'smtp',
          message: 'error:0A0000C7:SSL routines::unsupported protocol',
        },
      }),
      seen: {
        kind: 'tls-failed',
        remoteAddress: '192.0.2.3',
        code: 'TLSError',
        reason: 'error:0A0000C7:SSL routines::unsupported protocol',
      },
    },
    {
      name: 'a TLS version we do not speak',
      err: error('unsupported protocol', {
        code: 'ERR_SSL_UNSUPPORTED_PROTOCOL',
        meta: { stage: 'connect', remoteAddress: '192.0.2.4' },
      }),
      seen: {
        kind: 'tls-failed',
        remoteAddress: '192.0.2.4',
        code: 'ERR_SSL_UNSUPPORTED_PROTOCOL',
        reason: 'unsupported protocol',
      },
    },
    {
      name: 'a client that went quiet during the handshake',
      err: error('TLS handshake timeout', { code: 'ERR_TLS_HANDSHAKE_TIMEOUT' }),
      seen: {
        kind: 'tls-failed',
        remoteAddress: null,
        code: 'ERR_TLS_HANDSHAKE_TIMEOUT',
        reason: 'TLS handshake timeout',
      },
    },
    {
      name: 'a client that tried to renegotiate TLS 1.2',
      err: error('Attempt to renegotiate TLS session failed', { code: 'ERR_TLS_RENEGOTIATION_DISABLED' }),
      seen: {
        kind: 'tls-failed',
        remoteAddress: null,
        code: 'ERR_TLS_RENEGOTIATION_DISABLED',
        reason: 'Attempt to renegotiate TLS session failed',
      },
    },
    {
      name: 'the listener could not bind: ours',
      err: error('listen EADDRINUSE', { code: 'EADDRINUSE' }),
      seen: { kind: 'internal' },
    },
    { name: 'a bug: ours', err: new TypeError('x is not a function'), seen: { kind: 'internal' } },
  ])('$name', ({ err, seen }) => {
    expect(classifyConnectionError(err)).toEqual(seen);
  });
});
