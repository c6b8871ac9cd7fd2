import type { Logger } from './logger.ts';

/**
 * Where a listener binds when its host is "every interface" (README, "Configuration"): `::`,
 * which node opens dual-stack (IPv6 and, as IPv4-mapped addresses, IPv4), so the gateway is
 * reachable on IPv6-only, dual-stack and IPv4-only networks alike. On a host whose kernel has
 * no IPv6, `::` cannot be bound, and the listener takes the IPv4 wildcard instead.
 */
export const ALL_INTERFACES = '::';
export const ALL_IPV4_INTERFACES = '0.0.0.0';

/**
 * listen(…, '::') on a host without IPv6: EAFNOSUPPORT from a kernel without it (booted with
 * ipv6.disable=1, or built without), EADDRNOTAVAIL where a system reports the missing family
 * so. IPv6 only switched off by sysctl (disable_ipv6, Docker's default for a network without
 * IPv6) still binds `::`, and IPv4 clients reach it: no fallback is needed there.
 */
const NO_IPV6 = new Set(['EAFNOSUPPORT', 'EADDRNOTAVAIL']);

/** The host to try after listening on `host` failed with `err`, or null when none. Pure. */
export function ipv4Fallback(host: string, err: unknown): string | null {
  if (host !== ALL_INTERFACES) return null;
  const code = errorCode(err);
  return code !== undefined && NO_IPV6.has(code) ? ALL_IPV4_INTERFACES : null;
}

function errorCode(err: unknown): string | undefined {
  const code = typeof err === 'object' && err !== null && 'code' in err ? err.code : undefined;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Calls `listen(host)`; when that fails because the host has no IPv6, logs it and calls
 * `listen('0.0.0.0')`. Resolves with what listen resolved with and the host it bound.
 */
export async function listenOnHost<T>(
  host: string,
  listen: (host: string) => Promise<T>,
  log: Logger,
): Promise<{ bound: T; host: string }> {
  try {
    return { bound: await listen(host), host };
  } catch (err) {
    const fallback = ipv4Fallback(host, err);
    if (fallback === null) throw err;
    log.warn(
      { host, fallback, code: errorCode(err) },
      'this host has no IPv6: listening on every IPv4 interface instead',
    );
    return { bound: await listen(fallback), host: fallback };
  }
}
