import { describe, expect, it } from 'vitest';
import { isLoopbackHost, parseBaseUrl } from '../../../src/parsing-api/base-url-policy.ts';

/**
 * Which hosts count as loopback (base-url-policy.ts says why): 127.0.0.0/8, ::1, localhost and
 * the names under it (RFC 6761 §6.3), nothing else.
 */
describe('isLoopbackHost', () => {
  it.each([
    { host: 'localhost', expected: true },
    { host: 'LOCALHOST', expected: true },
    { host: 'app.localhost', expected: true },
    { host: 'a.b.Localhost', expected: true },
    { host: '127.0.0.1', expected: true },
    { host: '127.255.3.4', expected: true },
    { host: '[::1]', expected: true },
    { host: '::1', expected: true },
    { host: '128.0.0.1', expected: false },
    { host: '10.0.0.1', expected: false },
    { host: '0.0.0.0', expected: false },
    { host: '[::2]', expected: false },
    { host: '::', expected: false },
    { host: '[::ffff:7f00:1]', expected: false },
    { host: 'localhost.', expected: false },
    { host: 'applocalhost', expected: false },
    { host: '127.0.0.1.nip.io', expected: false },
    { host: 'localhost.example.com', expected: false },
    { host: 'api.eu1.example.com', expected: false },
  ])('$host → $expected', ({ host, expected }) => {
    expect(isLoopbackHost(host)).toBe(expected);
  });
});

describe('parseBaseUrl', () => {
  it.each([
    { url: 'https://api.eu1.example.com', origin: 'https://api.eu1.example.com', pathPrefix: '' },
    { url: 'https://api.example.com/', origin: 'https://api.example.com', pathPrefix: '' },
    { url: 'https://gw.example.com/parser/', origin: 'https://gw.example.com', pathPrefix: '/parser' },
    { url: 'http://127.0.0.1:4010', origin: 'http://127.0.0.1:4010', pathPrefix: '' },
    { url: 'http://localhost:4010', origin: 'http://localhost:4010', pathPrefix: '' },
    { url: 'http://[::1]:4010', origin: 'http://[::1]:4010', pathPrefix: '' },
    { url: 'http://127.1:4010', origin: 'http://127.0.0.1:4010', pathPrefix: '' },
    { url: 'http://App.Localhost:8026/', origin: 'http://app.localhost:8026', pathPrefix: '' },
  ])('accepts $url', ({ url, origin, pathPrefix }) => {
    expect(parseBaseUrl(url)).toEqual({ origin, pathPrefix });
  });

  it.each([
    { url: 'http://api.example.com', error: /plain http/ },
    { url: 'http://192.168.1.10:4010', error: /plain http/ },
    { url: 'ftp://api.example.com', error: /must be https/ },
    { url: 'api.example.com', error: /not a URL/ },
    { url: 'https://user:secret@api.example.com', error: /credentials/ },
  ])('refuses $url', ({ url, error }) => {
    expect(() => parseBaseUrl(url)).toThrow(error);
  });

  it('does not repeat credentials from the URL in the error', () => {
    expect(() => parseBaseUrl('http://user:hunter2@api.example.com')).not.toThrow(/hunter2/);
  });
});

describe('parseBaseUrl with allowInsecureHttp', () => {
  it('takes http: to a host that is not loopback only when allowed', () => {
    expect(() => parseBaseUrl('http://mock-api:8026')).toThrow(/plain http/);
    expect(parseBaseUrl('http://mock-api:8026', true)).toEqual({
      origin: 'http://mock-api:8026',
      pathPrefix: '',
    });
  });
});
