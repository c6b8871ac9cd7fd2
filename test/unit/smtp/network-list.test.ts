import { describe, expect, it } from 'vitest';
import { compileNetworkList, parseCidr, unmapIpv4 } from '../../../src/smtp/network-list.ts';

describe('parseCidr', () => {
  it.each([
    ['10.0.0.0/8', { address: '10.0.0.0', prefix: 8, family: 'ipv4' }],
    ['192.0.2.7', { address: '192.0.2.7', prefix: 32, family: 'ipv4' }],
    ['192.0.2.7/32', { address: '192.0.2.7', prefix: 32, family: 'ipv4' }],
    ['0.0.0.0/0', { address: '0.0.0.0', prefix: 0, family: 'ipv4' }],
    ['2001:db8::/32', { address: '2001:db8::', prefix: 32, family: 'ipv6' }],
    ['::1', { address: '::1', prefix: 128, family: 'ipv6' }],
    [' 10.1.2.3/16 ', { address: '10.1.2.3', prefix: 16, family: 'ipv4' }],
  ])('%s parses', (text, expected) => {
    expect(parseCidr(text)).toEqual(expected);
  });

  it.each([
    '',
    'lb.example.com',
    '10.0.0.0/33',
    '2001:db8::/129',
    '10.0.0.0/',
    '10.0.0.0/8/8',
    '10.0.0.0/-1',
    '10.0.0.0/08x',
    '256.0.0.1',
  ])('%j is refused', (text) => {
    expect(parseCidr(text)).toBeNull();
  });
});

describe('compileNetworkList', () => {
  const matches = compileNetworkList(['10.0.0.0/8', '192.0.2.7', '2001:db8::/32']);

  it.each([
    ['10.255.1.2', true],
    ['11.0.0.1', false],
    ['192.0.2.7', true],
    ['192.0.2.8', false],
    ['::ffff:10.1.1.1', true],
    ['::FFFF:192.0.2.7', true],
    ['2001:db8:1::5', true],
    ['2001:db9::5', false],
    ['not an address', false],
    ['', false],
  ])('%s → %s', (address, expected) => {
    expect(matches(address)).toBe(expected);
  });

  it('matches nothing when empty', () => {
    expect(compileNetworkList([])('127.0.0.1')).toBe(false);
  });

  it('throws naming a bad entry', () => {
    expect(() => compileNetworkList(['10.0.0.0/8', 'lb.example'])).toThrow(/"lb\.example"/);
  });

  it('unmaps IPv4-mapped IPv6 only', () => {
    expect(unmapIpv4('::ffff:198.51.100.4')).toBe('198.51.100.4');
    expect(unmapIpv4('2001:db8::1')).toBe('2001:db8::1');
  });
});
