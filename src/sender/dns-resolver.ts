import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { DNSResolver } from 'mailauth';

/**
 * What mailauth calls for every DNS question (TXT for SPF, DKIM keys and DMARC records;
 * A, AAAA, MX and PTR for SPF mechanisms): node:dns's `resolve(name, rrtype)`, answering in
 * node:dns's shapes and rejecting with node:dns's error codes. mailauth reads two codes as
 * permanent ("there is no such record": SPF none, no DKIM key, no DMARC record) and every
 * other one as temporary (SPF/DKIM/DMARC temperror, which the gateway answers with 451).
 */
export type DnsResolver = DNSResolver;

export interface DnsResolverOptions {
  /** `host`, `host:port`, `[ipv6]:port`; empty: the system's resolvers (/etc/resolv.conf). */
  servers: readonly string[];
  /** Milliseconds one query waits for an answer before it is sent again. */
  timeout: number;
  /** Times a query is sent to each server before it fails with ETIMEOUT. */
  tries: number;
}

/** A failed lookup, with the code mailauth decides on; `temporary` says which kind it is. */
export class DnsLookupError extends Error {
  readonly code: string;
  readonly temporary: boolean;

  constructor(name: string, rrtype: string, code: string, cause?: unknown) {
    super(`DNS ${rrtype} ${name}: ${code}`, { cause });
    this.name = 'DnsLookupError';
    this.code = code;
    this.temporary = !PERMANENT_CODES.has(code);
  }
}

/**
 * node:dns codes that mean the answer is final: NXDOMAIN (ENOTFOUND; c-ares also says
 * ENONAME), NOERROR without records of the type (ENODATA), a name that cannot exist
 * (EBADNAME). Everything else (ESERVFAIL, ETIMEOUT, EREFUSED, ECONNREFUSED, a malformed
 * answer) may answer differently later.
 */
const PERMANENT = new Map([
  ['ENOTFOUND', 'ENOTFOUND'],
  ['ENONAME', 'ENOTFOUND'],
  ['ENODATA', 'ENODATA'],
  ['EBADNAME', 'EBADNAME'],
]);
const PERMANENT_CODES = new Set(PERMANENT.values());

/** The code mailauth sees for a node:dns error: permanent ones in their canonical form, others as they are. */
export function lookupErrorCode(err: unknown): string {
  const code = typeof err === 'object' && err !== null && 'code' in err ? err.code : undefined;
  if (typeof code !== 'string' || code === '') return 'ESERVFAIL';
  return PERMANENT.get(code) ?? code;
}

/**
 * A resolver on node:dns with the configured servers (or the system's), each query bounded by
 * `timeout` × `tries` per server. It keeps no cache: the resolvers it asks are expected to
 * cache (every recursive resolver does), and a cache here would outlive their TTLs.
 */
export function createDnsResolver(options: DnsResolverOptions): DnsResolver {
  const resolver = new Resolver({ timeout: options.timeout, tries: options.tries });
  if (options.servers.length > 0) resolver.setServers([...options.servers]);

  return async (name, rrtype) => {
    try {
      // node:dns answers each rrtype in the shape mailauth reads (TXT: string[][],
      // A/AAAA/PTR: string[], MX: {exchange, priority}[]); mailauth's type names only two.
      const answer: unknown = await resolver.resolve(name, rrtype);
      return answer as string[][] | string[];
    } catch (err) {
      throw new DnsLookupError(name, rrtype, lookupErrorCode(err), err);
    }
  };
}

/**
 * Whether a `dns.servers` entry is one node:dns takes: an IPv4 or IPv6 address, optionally
 * with a port (`192.0.2.53:5353`, `[2001:db8::53]:5353`). Host names are refused: the
 * resolver must not depend on DNS to find itself.
 */
export function isDnsServerAddress(text: string): boolean {
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(text);
  if (bracketed) return isIP(bracketed[1] ?? '') === 6 && validPort(bracketed[2]);
  if (isIP(text) !== 0) return true;
  const withPort = /^([^:]+):(\d{1,5})$/.exec(text);
  return withPort !== null && isIP(withPort[1] ?? '') === 4 && validPort(withPort[2]);
}

function validPort(port: string | undefined): boolean {
  if (port === undefined) return true;
  const value = Number(port);
  return value >= 1 && value <= 65_535;
}
