import addressparser from 'nodemailer/lib/addressparser';
import { type NormalizedAddress, normalizeAddress } from './normalize-address.ts';

export type FromHeaderResult =
  | { readonly ok: true; readonly address: NormalizedAddress }
  | { readonly ok: false; readonly reason: string };

/**
 * C0 controls except HTAB, DEL and the C1 block. An unfolded header has no CR or LF left,
 * and a NUL is where readers disagree: nodemailer drops it, others end the string there.
 */
const CONTROL = /(?!\t)\p{Cc}/u;

/**
 * RFC 5322 §3.4.1 local part: a dot-atom or a quoted string. atext is ASCII plus, per
 * RFC 6532 §3.2, any non-ASCII character (controls and whitespace are refused earlier).
 * Anything else came out of a malformed header that the parser tolerated.
 */
const ATEXT = "[A-Za-z0-9!#$%&'*+\\-/=?^_`{|}~\\u{80}-\\u{10FFFF}]";
const DOT_ATOM = new RegExp(`^${ATEXT}+(?:\\.${ATEXT}+)*$`, 'u');
const QUOTED_STRING = /^"(?:[^"\\]|\\.)*"$/u;

/**
 * One word holding none of the RFC 5322 specials an addr-spec has no use for outside quotes
 * (the `[`/`]` of domain literals included: the gateway takes hostnames only).
 */
const ADDR_SPEC_SHAPE = /^[^\s<>()[\]\\,;:"]+$/u;

/**
 * The one header From address of a message, the address the allow-list is checked against
 * (docs/architecture.md, "The sender check"). `values` are the raw values of every From header, unfolded and
 * not decoded: the display name is never read, so an encoded word that decodes to an address
 * cannot pass for one.
 *
 * nodemailer's addressparser does the parsing. It recovers from malformed input by guessing
 * (`ann@acme.example(x)evil.test` becomes `ann@acme.example` named `evil.test`), and a guess
 * is where a forged sender hides, so a value is only accepted when it has the shape of one
 * mailbox: see `hasMailboxShape`.
 */
export function parseFromHeader(values: readonly string[]): FromHeaderResult {
  // A message's From values are read once, as one array, and asked about several times (which
  // bodies to keep, forwarding confirmations, the sender check): parsed once per array.
  let result = parsedFromHeaders.get(values);
  if (result === undefined) {
    result = parseValues(values);
    parsedFromHeaders.set(values, result);
  }
  return result;
}

/** Results by the array of values they were parsed from; an array is never changed once read. */
const parsedFromHeaders = new WeakMap<readonly string[], FromHeaderResult>();

function parseValues(values: readonly string[]): FromHeaderResult {
  const [value] = values;
  if (value === undefined) {
    return refuse('no From header');
  }
  if (values.length > 1) {
    return refuse(`${values.length} From headers`);
  }
  if (CONTROL.test(value)) {
    return refuse('From holds a control character');
  }
  const entries = addressparser(value);
  const [entry] = entries;
  if (entry === undefined) {
    return refuse('From is empty');
  }
  if (entries.length > 1) {
    return refuse(`From holds ${entries.length} mailboxes`);
  }
  if (entry.group !== undefined) {
    return refuse('From is a group');
  }
  // The parsed address must be a literal part of the header: proof it was read, not rebuilt.
  if (!hasMailboxShape(value) || entry.address === '' || !value.includes(entry.address)) {
    return refuse('From is malformed');
  }
  const address = normalizeAddress(entry.address);
  if (address === null || !(DOT_ATOM.test(address.local) || QUOTED_STRING.test(address.local))) {
    return refuse('From address is malformed');
  }
  return { ok: true, address };
}

function refuse(reason: string): FromHeaderResult {
  return { ok: false, reason };
}

/**
 * Whether a header value has the shape of one mailbox (RFC 5322 §3.4): `phrase <addr-spec>`
 * or a bare `addr-spec`, each with comments anywhere around. This does not parse the address;
 * it only refuses input the parser would have to guess at: text after a bare address, an
 * address glued to a comment, two angle addresses, unbalanced quotes or comments.
 */
function hasMailboxShape(value: string): boolean {
  const shape = skeleton(value)?.trim();
  if (shape === undefined) {
    return false;
  }
  const angle = /^[^<>]*<([^<>]*)>$/.exec(shape);
  return ADDR_SPEC_SHAPE.test(angle ? (angle[1] ?? '').trim() : shape);
}

/**
 * The value with each quoted string replaced by `q` (so `"a b"@x` stays one word) and each
 * comment by a space (RFC 5322 §3.2.2: a comment is folding white space). Null when a quoted
 * string or a comment is left open.
 */
function skeleton(value: string): string | null {
  let out = '';
  let quoted = false;
  let depth = 0;
  for (let i = 0; i < value.length; i++) {
    const char = value.charAt(i);
    if (quoted || depth > 0) {
      if (char === '\\') {
        i++; // quoted-pair: the next character is literal
      } else if (quoted && char === '"') {
        quoted = false;
        out += 'q';
      } else if (!quoted && char === '(') {
        depth++;
      } else if (!quoted && char === ')') {
        depth--;
        if (depth === 0) {
          out += ' ';
        }
      }
    } else if (char === '"') {
      quoted = true;
    } else if (char === '(') {
      depth = 1;
    } else {
      out += char;
    }
  }
  return quoted || depth > 0 ? null : out;
}
