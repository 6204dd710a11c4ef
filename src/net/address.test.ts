import { describe, expect, it } from 'vitest';
import { addressRange, isPublicAddress } from './address.js';

/** Every address here must be refused: issue 21 finding 6 first, then the usual suspects. */
const REFUSED: [string, string][] = [
  ['240.0.0.1', 'reserved (240.0.0.0/4)'],
  ['255.255.255.254', 'reserved (240.0.0.0/4)'],
  ['255.255.255.255', 'broadcast'],
  ['198.18.0.1', 'benchmarking (198.18.0.0/15)'],
  ['198.19.255.254', 'benchmarking (198.18.0.0/15)'],
  ['64:ff9b::7f00:1', 'NAT64 of 127.0.0.1'],
  ['64:ff9b::5db8:d822', 'NAT64 of a public address (64:ff9b::/96 is refused whole)'],
  ['2002:7f00:1::', '6to4 of 127.0.0.1'],
  ['2002:5db8:d822::1', '6to4 of a public address (2002::/16 is refused whole)'],
  ['::7f00:1', 'IPv4-compatible 127.0.0.1'],
  ['::a00:1', 'IPv4-compatible 10.0.0.1'],
  ['::ffff:0:7f00:1', 'IPv4-translated 127.0.0.1 (::ffff:0:0/96)'],
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['0.0.0.0', 'unspecified'],
  ['10.0.0.1', 'private'],
  ['10.255.255.255', 'private'],
  ['172.16.0.1', 'private'],
  ['192.168.1.1', 'private'],
  ['100.64.0.1', 'carrier-grade NAT'],
  ['169.254.169.254', 'link-local (cloud metadata)'],
  ['192.0.0.1', 'IETF protocol assignments'],
  ['192.0.2.1', 'documentation'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['::1', 'IPv6 loopback'],
  ['::', 'IPv6 unspecified'],
  ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
  ['::ffff:7f00:1', 'IPv4-mapped loopback, hex'],
  ['::ffff:169.254.169.254', 'IPv4-mapped link-local'],
  ['fc00::1', 'unique local (fc00::/7)'],
  ['fd12:3456::1', 'unique local (fc00::/7)'],
  ['fe80::1', 'link-local (fe80::/10)'],
  ['fe80::1%eth0', 'link-local with a zone'],
  ['fec0::1', 'site-local (deprecated)'],
  ['ff02::1', 'multicast'],
  ['2001::1', 'Teredo'],
  ['2001:db8::1', 'documentation'],
  ['100::1', 'discard'],
  ['[::1]', 'bracketed, as a URL writes it'],
  ['4000::1', 'outside 2000::/3'],
  ['localhost', 'a name, not an address'],
  ['', 'nothing'],
];

const PUBLIC = ['93.184.216.34', '8.8.8.8', '1.1.1.1', '::ffff:93.184.216.34', '2606:4700::1111', '2001:4860:4860::8888', '[2606:4700::1111]'];

describe('isPublicAddress', () => {
  it.each(REFUSED)('refuses %s (%s)', (ip) => {
    expect(isPublicAddress(ip)).toBe(false);
  });

  it.each(PUBLIC)('allows %s', (ip) => {
    expect(isPublicAddress(ip)).toBe(true);
  });

  it('judges IPv4 written in IPv6 as the IPv4 address it carries', () => {
    expect(addressRange('::ffff:10.0.0.1')).toBe('private');
    expect(addressRange('::7f00:1')).toBe('loopback');
    expect(addressRange('::ffff:0:7f00:1')).toBe('rfc6145');
  });
});
