/**
 * Subaddresses (RFC 5233): `invoices+acme@…` is the address `invoices@…` with the tag `acme`,
 * as Postfix's recipient_delimiter, Gmail and most inbound mail services read it. The gateway
 * routes such an address as its base and records the tag (docs/architecture.md,
 * "Subaddresses").
 */

/**
 * The characters a separator may be: those RFC 5322 §3.2.3 allows in an atom besides letters
 * and digits. A dot is not among them on purpose: it joins the words of ordinary local parts
 * (`first.last`), which must never be read as a tag.
 */
export const SEPARATOR_CHARACTERS = "!#$%&'*+-/=?^_`{|}~";

/** Whether `text` may be smtp.subaddressSeparator: one of SEPARATOR_CHARACTERS. */
export function isSeparator(text: string): boolean {
  return text.length === 1 && SEPARATOR_CHARACTERS.includes(text);
}

/** A local part read as a base and a tag. */
export interface Subaddress {
  /** The local part before the separator: what the route table compares. */
  readonly base: string;
  /** Everything after the first separator, as written; empty for `inbox+@…`. */
  readonly tag: string;
}

/**
 * Split a local part at the first `separator`. Null when it holds none, when the separator is
 * off (null), or when the local part starts with it: `+orders` has no base to route by, so
 * only a literal ingest address `+orders@…` takes it. The tag is everything after the first
 * separator, further separators included (`inbox+a+b` is `inbox` tagged `a+b`), as Postfix
 * and Gmail read it.
 */
export function splitSubaddress(local: string, separator: string | null): Subaddress | null {
  if (separator === null || separator === '') return null;
  const at = local.indexOf(separator);
  if (at <= 0) return null;
  return { base: local.slice(0, at), tag: local.slice(at + separator.length) };
}

/** The form two tags are the same tag in: without case, as local parts are compared. */
export function tagKey(tag: string): string {
  return tag.toLowerCase();
}
