import { isIPv4, isIPv6 } from 'node:net';

/**
 * Which base URLs may carry the API key: the one policy that both `check-config` (the api
 * section of config/schema.ts) and the transport at start (api-transport.ts) apply, so a
 * configuration the check passes is one the gateway starts with. The key travels in the
 * Authorization header, so plain `http:` is refused unless the host is this machine or
 * `api.allowInsecureHttp` says a test network is meant, and credentials in the URL are
 * refused outright.
 *
 * Loopback, as decided here (the table in test/unit/parsing-api/base-url-policy.test.ts):
 * - 127.0.0.0/8 and ::1, in any spelling the URL parser normalises to those (`127.1`, `[::1]`);
 * - `localhost` and every name under it (`app.localhost`), in any case: RFC 6761 §6.3 keeps
 *   them for loopback, and the transport resolves them as `localhost` without asking DNS
 *   (localhostLookup), so such a name cannot be steered to another machine;
 * - not an IPv4-mapped address (`::ffff:127.0.0.1`), a trailing-dot name (`localhost.`) or a
 *   name that only contains one of these (`127.0.0.1.nip.io`, `localhost.example.com`):
 *   rare spellings, refused rather than reasoned about.
 */

/** What the key is sent to: an origin and a path prefix, never credentials. */
export interface BaseUrl {
  origin: string;
  /** The base URL's path without a trailing slash: "" or "/prefix". */
  pathPrefix: string;
}

/** `localhost` or a name under it (RFC 6761 §6.3), any case. */
export function isLocalhostName(hostname: string): boolean {
  const name = hostname.toLowerCase();
  return name === 'localhost' || name.endsWith('.localhost');
}

/** A host an `http:` URL may name without the traffic (and the API key) crossing a network. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  if (isIPv4(host)) return host.startsWith('127.');
  if (isIPv6(host)) return host === '::1';
  return isLocalhostName(host);
}

/** Why this URL must not carry the key in clear, or undefined when it may be used. */
export function plainHttpRefusal(url: URL, allowInsecureHttp: boolean): string | undefined {
  if (url.protocol !== 'http:' || allowInsecureHttp || isLoopbackHost(url.hostname)) return undefined;
  return (
    `http: would send the API key in clear to ${url.hostname}; use https: ` +
    '(plain http is for loopback hosts only: 127.0.0.0/8, ::1, localhost, *.localhost)'
  );
}

/** The base URL the transport sends to; throws, naming the problem, for one that would leak the key. */
export function parseBaseUrl(baseUrl: string, allowInsecureHttp = false): BaseUrl {
  const url = URL.parse(baseUrl);
  if (url === null) throw new Error(`api.baseUrl is not a URL: ${JSON.stringify(baseUrl)}`);
  if (url.username !== '' || url.password !== '') {
    throw new Error(
      'api.baseUrl must not carry credentials; the API key is sent in the Authorization header',
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new Error(`api.baseUrl must be https:, got ${url.protocol} (${url.origin})`);
  }
  const refusal = plainHttpRefusal(url, allowInsecureHttp);
  if (refusal !== undefined) throw new Error(`api.baseUrl: ${refusal}`);
  return { origin: url.origin, pathPrefix: url.pathname.replace(/\/+$/, '') };
}
