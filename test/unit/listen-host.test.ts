import { describe, expect, it } from 'vitest';
import { LogSink } from '../../harness/gateway-harness.ts';
import { ipv4Fallback, listenOnHost } from '../../src/listen-host.ts';
import { createLogger } from '../../src/logger.ts';

const failure = (code: string) => Object.assign(new Error(`listen ${code}`), { code });

describe('the IPv4 fallback of a listener on ::', () => {
  it.each([
    // A kernel without IPv6, and IPv6 disabled: every IPv4 interface instead.
    ['::', failure('EAFNOSUPPORT'), '0.0.0.0'],
    ['::', failure('EADDRNOTAVAIL'), '0.0.0.0'],
    // The port is taken, or not ours to bind: no other host would help.
    ['::', failure('EADDRINUSE'), null],
    ['::', failure('EACCES'), null],
    ['::', new Error('no code'), null],
    // Only the wildcard falls back: an address the operator named is kept or fails.
    ['::1', failure('EADDRNOTAVAIL'), null],
    ['2001:db8::1', failure('EADDRNOTAVAIL'), null],
    ['0.0.0.0', failure('EAFNOSUPPORT'), null],
  ])('%s after %s → %s', (host, err, expected) => {
    expect(ipv4Fallback(host, err)).toBe(expected);
  });

  it('listens on 0.0.0.0 when :: cannot be bound, and says so once in the log', async () => {
    const sink = new LogSink();
    const tried: string[] = [];
    const listen = async (host: string) => {
      tried.push(host);
      if (host === '::') throw failure('EAFNOSUPPORT');
      return 2525;
    };
    const result = await listenOnHost('::', listen, createLogger({ level: 'info', destination: sink }));
    expect(result).toEqual({ bound: 2525, host: '0.0.0.0' });
    expect(tried).toEqual(['::', '0.0.0.0']);
    expect(sink.lines.map((line) => JSON.parse(line).msg)).toEqual([
      'this host has no IPv6: listening on every IPv4 interface instead',
    ]);
  });

  it('passes any other failure on, trying nothing else', async () => {
    const tried: string[] = [];
    const listen = async (host: string) => {
      tried.push(host);
      throw failure('EADDRINUSE');
    };
    const log = createLogger({ level: 'silent', destination: new LogSink() });
    await expect(listenOnHost('::', listen, log)).rejects.toThrow('listen EADDRINUSE');
    expect(tried).toEqual(['::']);
  });
});
