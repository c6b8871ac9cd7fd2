import { isIPv4 } from 'node:net';

/**
 * PROXY protocol v2 headers built byte by byte from the protocol's layout, as a load balancer
 * sends them: the 12-byte signature, version 2 with the command, the family and transport, the
 * length, the addresses, then any TLVs. Tests send these over real sockets; haproxy
 * (harness/haproxy.ts) is the independent sender beside them.
 */

export const SIGNATURE = Buffer.from('0d0a0d0a000d0a515549540a', 'hex');

export interface ProxyV2Input {
  /** Default PROXY. */
  command?: 'PROXY' | 'LOCAL';
  /** The client and the address it connected to; absent: an UNSPEC header with no addresses. */
  source?: { address: string; port: number };
  destination?: { address: string; port: number };
  /** Raw TLV bytes after the addresses. */
  tlvs?: Buffer;
  /** The family and transport byte, over what the addresses imply (0x11 TCP4, 0x21 TCP6). */
  familyAndTransport?: number;
  /** The version and command byte, over what `command` implies (0x21 PROXY, 0x20 LOCAL). */
  versionAndCommand?: number;
  /** The length field, over the true length. */
  length?: number;
}

export function proxyV2Header(input: ProxyV2Input = {}): Buffer {
  const command = input.command ?? 'PROXY';
  const {
    source,
    destination = { address: source && isIPv4(source.address) ? '192.0.2.25' : '2001:db8::25', port: 25 },
  } = input;
  let addresses = Buffer.alloc(0);
  let family = 0x00;
  if (source) {
    const v4 = isIPv4(source.address);
    family = v4 ? 0x11 : 0x21;
    const ports = Buffer.alloc(4);
    ports.writeUInt16BE(source.port, 0);
    ports.writeUInt16BE(destination.port, 2);
    addresses = Buffer.concat([
      v4 ? ipv4Bytes(source.address) : ipv6Bytes(source.address),
      v4 ? ipv4Bytes(destination.address) : ipv6Bytes(destination.address),
      ports,
    ]);
  }
  const payload = Buffer.concat([addresses, input.tlvs ?? Buffer.alloc(0)]);
  const fixed = Buffer.alloc(4);
  fixed.writeUInt8(input.versionAndCommand ?? (command === 'PROXY' ? 0x21 : 0x20), 0);
  fixed.writeUInt8(input.familyAndTransport ?? family, 1);
  fixed.writeUInt16BE(input.length ?? payload.length, 2);
  return Buffer.concat([SIGNATURE, fixed, payload]);
}

/** One TLV: type, 2-byte length, value. */
export function tlv(type: number, value: Buffer): Buffer {
  const head = Buffer.alloc(3);
  head.writeUInt8(type, 0);
  head.writeUInt16BE(value.length, 1);
  return Buffer.concat([head, value]);
}

function ipv4Bytes(address: string): Buffer {
  return Buffer.from(address.split('.').map(Number));
}

/** `2001:db8::7` to its 16 bytes (no embedded IPv4 form; tests write those in hex groups). */
function ipv6Bytes(address: string): Buffer {
  const [head = '', tail] = address.split('::');
  const groups = (text: string | undefined) => (text ? text.split(':') : []);
  const before = groups(head);
  const after = groups(tail);
  const zeros = tail === undefined ? [] : Array.from({ length: 8 - before.length - after.length }, () => '0');
  const bytes = Buffer.alloc(16);
  [...before, ...zeros, ...after].forEach((group, i) => {
    bytes.writeUInt16BE(Number.parseInt(group, 16), i * 2);
  });
  return bytes;
}
