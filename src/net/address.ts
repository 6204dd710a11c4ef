/**
 * Which addresses an outbound request may reach: only what ipaddr.js calls `unicast` (every
 * special-purpose range it knows, loopback, private, link-local, CGNAT, reserved, benchmarking,
 * multicast, broadcast, NAT64, 6to4, Teredo…, is refused). IPv4 written inside IPv6 (mapped
 * `::ffff:a.b.c.d`, compatible `::a.b.c.d`) is judged as the IPv4 address it carries, and IPv6
 * outside 2000::/3, the only block IANA hands out as global unicast, is refused too.
 */
import net from 'node:net';
import ipaddr from 'ipaddr.js';

const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');

/**
 * The range an IP address is in, by ipaddr.js's names (`unicast`, `loopback`, `private`,
 * `reserved`, `rfc6052`…); `invalid` for a string that is not an IP address.
 *
 *   addressRange('::ffff:0a00:0001') → 'private'   addressRange('2002:7f00:1::') → '6to4'
 */
export function addressRange(ip: string): string {
  const bare = ip.replace(/^\[(.*)\]$/, '$1');
  if (net.isIP(bare) === 0) return 'invalid';
  let addr = ipaddr.parse(bare);
  if (addr.kind() === 'ipv6') {
    const v6 = addr as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) addr = v6.toIPv4Address();
    // IPv4-compatible (::a.b.c.d, deprecated): a stack may still route it as the IPv4 address.
    else if (v6.parts.slice(0, 6).every((p) => p === 0))
      addr = ipaddr.IPv4.parse(`${v6.parts[6] >> 8}.${v6.parts[6] & 255}.${v6.parts[7] >> 8}.${v6.parts[7] & 255}`);
  }
  const range = addr.range();
  if (range === 'unicast' && addr.kind() === 'ipv6' && !(addr as ipaddr.IPv6).match(GLOBAL_UNICAST_V6)) return 'reserved';
  return range;
}

/** Whether `ip` (an IP address, not a name) is a public unicast address an outbound request may reach. */
export const isPublicAddress = (ip: string): boolean => addressRange(ip) === 'unicast';
