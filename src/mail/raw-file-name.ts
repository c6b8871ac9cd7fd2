/**
 * File names written as raw 8-bit bytes in a header (RFC 6532 allows UTF-8 there; older
 * clients write their local charset) rather than as RFC 2231 or RFC 2047 encodings.
 *
 * mailsplit reads a header line that holds 8-bit bytes as UTF-8 only when every byte of the
 * line is valid UTF-8, and otherwise as Latin-1, whole. So a UTF-8 name with one bad byte
 * (a name cut mid-character by a client, a stray Latin-1 letter) came out as mojibake in every
 * character: "Rechnung März\xff.pdf" became "Rechnung MÃ¤rz\u00ff.pdf". Here such a name is read
 * again from its bytes (docs/architecture.md, "File names").
 */

/**
 * Whether bytes are UTF-8 text with some damage, or text in an 8-bit charset:
 * UTF-8 when they hold at least one well-formed multi-byte UTF-8 sequence and no more bytes
 * at or above 0x80 outside such sequences ("stray" bytes) than sequences. Latin-1 text almost
 * never forms a well-formed sequence by chance (a letter from U+00C2 to U+00F4 followed by a
 * sign from U+0080 to U+00BF), so "Köln" (one stray byte, no sequence) stays Latin-1, while
 * "März" with one stray byte (one sequence, one stray byte) is UTF-8 with one U+FFFD.
 */
export function readsAsUtf8(bytes: Uint8Array): boolean {
  const { sequences, stray } = countUtf8(bytes);
  return sequences > 0 && sequences >= stray;
}

/**
 * `name` as decoded by mailsplit, read again as UTF-8 (only invalid bytes replaced by U+FFFD)
 * when mailsplit read it as Latin-1 and its bytes read as UTF-8 (readsAsUtf8).
 *
 * A name read as Latin-1 has only characters up to U+00FF, one at least above U+007F, and
 * stands as it is in the header line it came from (`headerValues`, as mailsplit decoded them).
 * A name decoded from RFC 2231 or RFC 2047 does not stand in its header as it is: its charset
 * was declared, and it is kept.
 */
export function decodeRawFileName(name: string, headerValues: readonly string[]): string {
  if (!/[\u0080-\u00ff]/.test(name) || /[\u0100-\u{10ffff}]/u.test(name)) return name;
  if (!headerValues.some((value) => value.includes(name))) return name;
  const bytes = Buffer.from(name, 'latin1');
  return readsAsUtf8(bytes) ? new TextDecoder('utf-8').decode(bytes) : name;
}

/** Well-formed multi-byte sequences (RFC 3629 section 4) and the 8-bit bytes outside them. */
function countUtf8(bytes: Uint8Array): { sequences: number; stray: number } {
  let sequences = 0;
  let stray = 0;
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i] ?? 0;
    if (lead < 0x80) {
      i += 1;
      continue;
    }
    const length = sequenceLength(bytes, i);
    if (length === 0) {
      stray += 1;
      i += 1;
    } else {
      sequences += 1;
      i += length;
    }
  }
  return { sequences, stray };
}

/** The length of the well-formed sequence starting at `at`, or 0 when none starts there. */
function sequenceLength(bytes: Uint8Array, at: number): number {
  const lead = bytes[at] ?? 0;
  // The second byte's range depends on the lead byte: no overlong forms, no surrogates,
  // nothing above U+10FFFF (RFC 3629 section 4, UTF8-2 to UTF8-4).
  let length: number;
  let low = 0x80;
  let high = 0xbf;
  if (lead >= 0xc2 && lead <= 0xdf) length = 2;
  else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead === 0xe0) low = 0xa0;
    if (lead === 0xed) high = 0x9f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead === 0xf0) low = 0x90;
    if (lead === 0xf4) high = 0x8f;
  } else return 0;
  if (at + length > bytes.length) return 0;
  const second = bytes[at + 1] ?? 0;
  if (second < low || second > high) return 0;
  for (let k = 2; k < length; k += 1) {
    const next = bytes[at + k] ?? 0;
    if (next < 0x80 || next > 0xbf) return 0;
  }
  return length;
}
