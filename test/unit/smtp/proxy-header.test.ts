import { describe, expect, it } from 'vitest';
import { proxyV2Header, SIGNATURE, tlv } from '../../../harness/proxy-v2.ts';
import {
  MAX_PROXY_V2_PAYLOAD_OCTETS,
  PROXY_V2_SIGNATURE,
  type ProxyHeaderRead,
  readProxyV2Header,
} from '../../../src/smtp/proxy-header.ts';

const tcp4 = proxyV2Header({ source: { address: '203.0.113.7', port: 40000 } });

describe('readProxyV2Header', () => {
  it('knows the signature the protocol defines', () => {
    expect(PROXY_V2_SIGNATURE.equals(SIGNATURE)).toBe(true);
  });

  it.each<[string, Buffer, ProxyHeaderRead]>([
    [
      'TCP over IPv4',
      tcp4,
      { kind: 'header', length: 28, command: 'PROXY', source: { address: '203.0.113.7', port: 40000 } },
    ],
    [
      'TCP over IPv6',
      proxyV2Header({ source: { address: '2001:db8:0:1::7', port: 2525 } }),
      {
        kind: 'header',
        length: 52,
        command: 'PROXY',
        source: { address: '2001:db8:0:1:0:0:0:7', port: 2525 },
      },
    ],
    [
      'TCP over IPv6 from an IPv4-mapped address: the IPv4 address',
      proxyV2Header({ source: { address: '0:0:0:0:0:ffff:cb00:7107', port: 1 } }),
      { kind: 'header', length: 52, command: 'PROXY', source: { address: '203.0.113.7', port: 1 } },
    ],
    [
      'TLVs after the addresses, skipped',
      proxyV2Header({
        source: { address: '198.51.100.4', port: 5000 },
        tlvs: Buffer.concat([
          tlv(0xea, Buffer.from('\x01vpce-0123456789abcdef0')),
          tlv(0x04, Buffer.alloc(4)),
        ]),
      }),
      {
        kind: 'header',
        length: 28 + 26 + 7,
        command: 'PROXY',
        source: { address: '198.51.100.4', port: 5000 },
      },
    ],
    [
      'LOCAL: the connection is the balancer’s own',
      proxyV2Header({ command: 'LOCAL' }),
      { kind: 'header', length: 16, command: 'LOCAL', source: null },
    ],
    [
      'LOCAL with addresses: they are ignored',
      proxyV2Header({ command: 'LOCAL', source: { address: '203.0.113.7', port: 1 } }),
      { kind: 'header', length: 28, command: 'LOCAL', source: null },
    ],
    [
      'PROXY over UNSPEC: no client address',
      proxyV2Header({ familyAndTransport: 0x00 }),
      { kind: 'header', length: 16, command: 'PROXY', source: null },
    ],
    [
      'PROXY over UDP: no TCP client',
      proxyV2Header({ source: { address: '203.0.113.7', port: 1 }, familyAndTransport: 0x12 }),
      { kind: 'header', length: 28, command: 'PROXY', source: null },
    ],
    [
      'PROXY from a unix socket',
      Buffer.concat([proxyV2Header({ familyAndTransport: 0x31, length: 216 }), Buffer.alloc(216)]),
      { kind: 'header', length: 232, command: 'PROXY', source: null },
    ],
    ['a v1 line', Buffer.from('PROXY TCP4 203.0.113.7 192.0.2.25 40000 25\r\n'), { kind: 'not-v2' }],
    ['an SMTP command', Buffer.from('EHLO client.test\r\n'), { kind: 'not-v2' }],
    ['one byte of the signature', SIGNATURE.subarray(0, 1), { kind: 'incomplete' }],
    ['the signature alone', SIGNATURE, { kind: 'incomplete' }],
    ['the fixed part without the addresses', tcp4.subarray(0, 16), { kind: 'incomplete' }],
    ['all but the last byte', tcp4.subarray(0, 27), { kind: 'incomplete' }],
    [
      'a stray byte inside the signature',
      Buffer.from('\r\n\r\n\0\r\nQUIZ\n'),
      { kind: 'invalid', reason: 'not a PROXY v2 signature' },
    ],
    ['an empty line', Buffer.from('\r\nEHLO x\r\n'), { kind: 'invalid', reason: 'not a PROXY v2 signature' }],
    [
      'version 1 in the version nibble',
      proxyV2Header({ versionAndCommand: 0x11, source: { address: '203.0.113.7', port: 1 } }),
      { kind: 'invalid', reason: 'PROXY version 1' },
    ],
    [
      'an undefined command',
      proxyV2Header({ versionAndCommand: 0x22, source: { address: '203.0.113.7', port: 1 } }),
      { kind: 'invalid', reason: 'PROXY v2 command 2' },
    ],
    [
      'an undefined family',
      proxyV2Header({ familyAndTransport: 0x41 }),
      { kind: 'invalid', reason: 'PROXY v2 family and transport 0x41' },
    ],
    [
      'an undefined transport',
      proxyV2Header({ familyAndTransport: 0x13 }),
      { kind: 'invalid', reason: 'PROXY v2 family and transport 0x13' },
    ],
    [
      'a TCP4 address block too short',
      Buffer.concat([proxyV2Header({ familyAndTransport: 0x11, length: 8 }), Buffer.alloc(8)]),
      { kind: 'invalid', reason: 'PROXY v2 address block of 8 bytes, 12 needed' },
    ],
    [
      'a TCP6 header with IPv4-sized addresses',
      proxyV2Header({ source: { address: '203.0.113.7', port: 1 }, familyAndTransport: 0x21 }),
      { kind: 'invalid', reason: 'PROXY v2 address block of 12 bytes, 36 needed' },
    ],
    [
      'a length over the cap, refused before its bytes arrive',
      proxyV2Header({ familyAndTransport: 0x11, length: MAX_PROXY_V2_PAYLOAD_OCTETS + 1 }),
      { kind: 'invalid', reason: `PROXY v2 header of 4097 bytes, over ${MAX_PROXY_V2_PAYLOAD_OCTETS}` },
    ],
  ])('%s', (_name, bytes, expected) => {
    expect(readProxyV2Header(bytes)).toEqual(expected);
  });

  it('reads the header at the front of what follows it, the SMTP bytes untouched', () => {
    const read = readProxyV2Header(Buffer.concat([tcp4, Buffer.from('EHLO client.test\r\n')]));
    expect(read).toMatchObject({ kind: 'header', length: tcp4.length });
  });

  it('reads a header at the cap', () => {
    const tlvs = tlv(0xe0, Buffer.alloc(MAX_PROXY_V2_PAYLOAD_OCTETS - 12 - 3));
    const header = proxyV2Header({ source: { address: '203.0.113.7', port: 1 }, tlvs });
    expect(readProxyV2Header(header)).toMatchObject({
      kind: 'header',
      length: 16 + MAX_PROXY_V2_PAYLOAD_OCTETS,
    });
  });

  it('says incomplete for every prefix of a header, and reads the whole', () => {
    const header = proxyV2Header({
      source: { address: '2001:db8::7', port: 25 },
      tlvs: tlv(0x05, Buffer.alloc(9)),
    });
    for (let end = 1; end < header.length; end++) {
      expect(readProxyV2Header(header.subarray(0, end)).kind).toBe('incomplete');
    }
    expect(readProxyV2Header(header).kind).toBe('header');
  });
});
