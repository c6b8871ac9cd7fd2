import { BlockList, isIP } from 'node:net';

/**
 * Lists of client networks written as CIDR blocks (`10.0.0.0/8`, `2001:db8::/32`) or single
 * addresses: the load balancers trusted to send a PROXY header (smtp.proxyProtocolFrom) and
 * the clients no rate limit applies to (smtp.rateLimit.exempt). A list is compiled once into
 * a matcher; a malformed entry is a configuration error, found when the file loads.
 */

export interface Network {
  address: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

/** `10.0.0.0/8` or a bare address (a /32 or /128); null when it is neither. Pure. */
export function parseCidr(text: string): Network | null {
  const [address = '', prefixText, ...rest] = text.trim().split('/');
  if (rest.length > 0) return null;
  const version = isIP(address);
  if (version === 0) return null;
  const family = version === 4 ? 'ipv4' : 'ipv6';
  const max = version === 4 ? 32 : 128;
  if (prefixText === undefined) return { address, prefix: max, family };
  if (!/^\d{1,3}$/.test(prefixText)) return null;
  const prefix = Number(prefixText);
  return prefix <= max ? { address, prefix, family } : null;
}

/** Whether a client address is in one of the networks. */
export type NetworkMatcher = (address: string) => boolean;

/** Compile a list once; throws naming the entry when one does not parse (the schema checks first). */
export function compileNetworkList(entries: readonly string[]): NetworkMatcher {
  const list = new BlockList();
  for (const entry of entries) {
    const network = parseCidr(entry);
    if (network === null) throw new Error(`not an IP address or CIDR block: ${JSON.stringify(entry)}`);
    list.addSubnet(network.address, network.prefix, network.family);
  }
  if (entries.length === 0) return () => false;
  return (address) => {
    const plain = unmapIpv4(address);
    const version = isIP(plain);
    if (version === 0) return false;
    return list.check(plain, version === 4 ? 'ipv4' : 'ipv6');
  };
}

/**
 * A dual-stack listener reports an IPv4 client as `::ffff:192.0.2.1`; lists name it as
 * `192.0.2.1`, so the mapped form is matched (and rate-limited) as the IPv4 address it is.
 */
export function unmapIpv4(address: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  return mapped?.[1] ?? address;
}
