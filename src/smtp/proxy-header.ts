/**
 * The binary PROXY protocol header (version 2), as a load balancer sends it first on each
 * connection it forwards (docs/architecture.md, "PROXY protocol"): a 12-byte signature, a
 * version and command byte, an address family and transport byte, a 2-byte length, then that
 * many bytes of addresses and TLVs. Pure: it looks at the bytes received so far and says
 * whether they are a v2 header, how long it is and what address it carries. Version 1, the
 * text line, is smtp-server's to read.
 */

/** `\r\n\r\n\0\r\nQUIT\n`: no text protocol's first line looks like it. */
export const PROXY_V2_SIGNATURE = Buffer.from([
  0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a,
]);

/** The signature, the two type bytes and the length field. */
export const PROXY_V2_FIXED_OCTETS = 16;

/**
 * Bytes of addresses and TLVs accepted after the fixed part (the field allows 65535). An
 * address block is at most 216 bytes (two unix paths); what load balancers add as TLVs (a
 * VPC endpoint or link id, a unique id, the client's TLS names) stays well under this. It
 * bounds what a peer can make the gateway hold before its session starts.
 */
export const MAX_PROXY_V2_PAYLOAD_OCTETS = 4096;

/** Bytes of the address block for TCP over IPv4 and IPv6: two addresses, two ports. */
const TCP4_ADDRESS_OCTETS = 12;
const TCP6_ADDRESS_OCTETS = 36;

export type ProxyHeaderRead =
  /** The bytes cannot start a v2 header: they are v1's (or nothing PROXY at all). */
  | { kind: 'not-v2' }
  /** A v2 header may still be coming: read more. */
  | { kind: 'incomplete' }
  /** A v2 signature with a header that the protocol does not allow, or one over the cap. */
  | { kind: 'invalid'; reason: string }
  /**
   * A whole header of `length` bytes. `source` is the client's address and port for a PROXY
   * command over TCP; null for LOCAL (the balancer's own connection, a health check) and for
   * a PROXY of another family (UNSPEC, unix sockets, UDP), whose addresses do not name a TCP
   * client: the connection's own address stands.
   */
  | {
      kind: 'header';
      length: number;
      command: 'LOCAL' | 'PROXY';
      source: { address: string; port: number } | null;
    };

/** Read a v2 header from the start of `bytes` (what has arrived so far). */
export function readProxyV2Header(bytes: Buffer): ProxyHeaderRead {
  const signature = Math.min(bytes.length, PROXY_V2_SIGNATURE.length);
  if (!bytes.subarray(0, signature).equals(PROXY_V2_SIGNATURE.subarray(0, signature))) {
    // Only the first byte tells v1 from v2: a trusted peer's bytes that start like the
    // signature and then stray are a broken v2 header, not a v1 line.
    return bytes[0] === PROXY_V2_SIGNATURE[0]
      ? { kind: 'invalid', reason: 'not a PROXY v2 signature' }
      : { kind: 'not-v2' };
  }
  if (bytes.length < PROXY_V2_FIXED_OCTETS) return { kind: 'incomplete' };

  const versionAndCommand = bytes.readUInt8(12);
  const familyAndTransport = bytes.readUInt8(13);
  const payload = bytes.readUInt16BE(14);
  if (versionAndCommand >> 4 !== 2)
    return { kind: 'invalid', reason: `PROXY version ${versionAndCommand >> 4}` };
  const commandCode = versionAndCommand & 0x0f;
  if (commandCode > 1) return { kind: 'invalid', reason: `PROXY v2 command ${commandCode}` };
  const family = familyAndTransport >> 4;
  const transport = familyAndTransport & 0x0f;
  // Families 0-3 (UNSPEC, INET, INET6, UNIX) and transports 0-2 (UNSPEC, STREAM, DGRAM) are
  // defined; the protocol has receivers reject any other value.
  if (family > 3 || transport > 2) {
    return { kind: 'invalid', reason: `PROXY v2 family and transport 0x${familyAndTransport.toString(16)}` };
  }
  if (payload > MAX_PROXY_V2_PAYLOAD_OCTETS) {
    return {
      kind: 'invalid',
      reason: `PROXY v2 header of ${payload} bytes, over ${MAX_PROXY_V2_PAYLOAD_OCTETS}`,
    };
  }
  const length = PROXY_V2_FIXED_OCTETS + payload;
  if (bytes.length < length) return { kind: 'incomplete' };

  const command = commandCode === 1 ? 'PROXY' : 'LOCAL';
  const addresses = bytes.subarray(PROXY_V2_FIXED_OCTETS, length);
  if (command === 'LOCAL' || transport !== 1 || (family !== 1 && family !== 2)) {
    return { kind: 'header', length, command, source: null };
  }
  const needed = family === 1 ? TCP4_ADDRESS_OCTETS : TCP6_ADDRESS_OCTETS;
  if (payload < needed) {
    return { kind: 'invalid', reason: `PROXY v2 address block of ${payload} bytes, ${needed} needed` };
  }
  const source =
    family === 1
      ? { address: ipv4Text(addresses.subarray(0, 4)), port: addresses.readUInt16BE(8) }
      : { address: ipv6Text(addresses.subarray(0, 16)), port: addresses.readUInt16BE(32) };
  return { kind: 'header', length, command, source };
}

function ipv4Text(bytes: Buffer): string {
  return [...bytes].join('.');
}

/**
 * Eight groups in hexadecimal, which smtp-server brings to RFC 5952's short form for the
 * session; an IPv4-mapped address (`::ffff:192.0.2.1`) as the IPv4 address it is, as the
 * rate limits and network lists match it (network-list.ts).
 */
function ipv6Text(bytes: Buffer): string {
  const mapped = bytes.subarray(0, 10).every((byte) => byte === 0) && bytes.readUInt16BE(10) === 0xffff;
  if (mapped) return ipv4Text(bytes.subarray(12, 16));
  const groups: string[] = [];
  for (let offset = 0; offset < 16; offset += 2) groups.push(bytes.readUInt16BE(offset).toString(16));
  return groups.join(':');
}
