import { domainToASCII } from 'node:url';

/**
 * An address split at its last `@`, in the form the gateway compares: the domain lower-cased,
 * without a trailing dot and in ASCII (IDN labels as punycode), the local part as written.
 * Local parts are compared case-insensitively by whoever compares them: RFC 5321 §2.4 lets
 * the receiving host decide, and every host the service deals with folds case.
 */
export interface NormalizedAddress {
  readonly local: string;
  readonly domain: string;
  /** `local@domain`, with the normalised domain. */
  readonly address: string;
}

/** RFC 1035 §2.3.4: 63 octets a label, 253 for the name written without its final dot. */
const MAX_LABEL_LENGTH = 63;
const MAX_DOMAIN_LENGTH = 253;

/** Letters, digits and inner hyphens (RFC 1123 §2.1); punycode labels (`xn--`) fit this too. */
const HOSTNAME_LABEL = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;

/**
 * Control and invisible formatting characters (bidi overrides, zero-width joiners). They
 * have no place in an address and make two different addresses look alike.
 */
const CONTROL_OR_FORMAT = /[\p{Cc}\p{Cf}]/u;
const WHITESPACE = /\s/u;

/**
 * The ASCII form of a domain, or null when it is not a hostname. Lower-cases, drops one
 * trailing dot (the root label, `acme.example.` is `acme.example`) and converts IDN labels
 * with UTS #46, as browsers do, so `BÜCHER.example` and `xn--bcher-kva.example` are one name.
 */
export function normalizeDomain(domain: string): string | null {
  if (domain === '' || CONTROL_OR_FORMAT.test(domain) || WHITESPACE.test(domain)) {
    return null;
  }
  const withoutRoot = domain.endsWith('.') ? domain.slice(0, -1) : domain;
  // domainToASCII returns '' for what the WHATWG URL parser refuses as a host.
  const ascii = domainToASCII(withoutRoot);
  return isHostname(ascii) ? ascii : null;
}

/**
 * Whether an ASCII name is a hostname. domainToASCII also accepts what URL hosts may be
 * (`0x7f.1` becomes `127.0.0.1`, `_dmarc` stays), so the result is checked again; a last
 * label of digits only is an IPv4 address, never a mail domain.
 */
function isHostname(ascii: string): boolean {
  if (ascii === '' || ascii.length > MAX_DOMAIN_LENGTH) {
    return false;
  }
  const labels = ascii.split('.');
  const last = labels[labels.length - 1] ?? '';
  if (/^[0-9]+$/.test(last)) {
    return false;
  }
  return labels.every((label) => label.length <= MAX_LABEL_LENGTH && HOSTNAME_LABEL.test(label));
}

/**
 * Split an address (header From or envelope recipient) at its last `@` and normalise its
 * domain. Null when either side is empty, when it holds whitespace or a control character
 * (a NUL can hide a second `@` from one reader and not another), or when the domain is not
 * a hostname (domain literals like `[192.0.2.1]` included).
 */
export function normalizeAddress(address: string): NormalizedAddress | null {
  if (CONTROL_OR_FORMAT.test(address) || WHITESPACE.test(address)) {
    return null;
  }
  const at = address.lastIndexOf('@');
  if (at <= 0) {
    return null;
  }
  const local = address.slice(0, at);
  const domain = normalizeDomain(address.slice(at + 1));
  if (domain === null) {
    return null;
  }
  return { local, domain, address: `${local}@${domain}` };
}
