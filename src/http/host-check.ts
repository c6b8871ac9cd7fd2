/**
 * Which Host a request may name when no http.token is set. Without a token the API listens on
 * loopback only, but a page of any site can still reach it by DNS rebinding: its name is made
 * to resolve to 127.0.0.1, so the browser sends that site's name as Host (and as Origin, which
 * defeats the same-origin check). Answering only loopback names and addresses, and the host of
 * http.publicUrl, turns such requests away; the browser never sends a rebinding site's
 * request with one of those names.
 */
export type HostCheck = (host: string | undefined) => boolean;

/** A check allowing loopback hosts (any port) and the host of `publicUrl` when given. */
export function createHostCheck(publicUrl: string | null): HostCheck {
  const published = publicUrl === null ? null : new URL(publicUrl).hostname;
  return (host) => {
    // HTTP/1.0 programs may send none; every browser sends one, so rebinding cannot omit it.
    if (host === undefined) return true;
    const name = hostname(host);
    return name !== null && (isLoopback(name) || name === published);
  };
}

/** The lower-case name or address of a Host header (no port, no trailing dot); null when malformed. */
function hostname(host: string): string | null {
  // A Host is a name and a port, nothing else: user info, a path or a query would be parsed away.
  if (/[@/?#\\\s]/.test(host)) return null;
  try {
    return new URL(`http://${host}`).hostname.replace(/\.$/, '');
  } catch {
    return null;
  }
}

function isLoopback(name: string): boolean {
  return (
    name === 'localhost' ||
    name.endsWith('.localhost') ||
    name === '[::1]' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name)
  );
}
