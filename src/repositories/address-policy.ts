import { BlockList, isIP } from 'node:net';

/**
 * Which addresses a webhook may be sent to (docs/security.md). A URL is user input and the
 * sender sits inside the lab's network, so by default nothing but the public internet is
 * reachable: loopback, private, shared, link-local (where cloud metadata services live),
 * multicast, documentation and other special-purpose ranges are refused, in IPv4 and IPv6,
 * IPv4-mapped and NAT64 forms included. Networks in STARLAB_WEBHOOK_ALLOWED_NETWORKS are
 * allowed even so, for labs whose hooks are internal.
 */
const REFUSED: { kind: string; networks: [string, number][] }[] = [
  { kind: 'a loopback address', networks: [['127.0.0.0', 8], ['::1', 128]] },
  { kind: 'a private address', networks: [['10.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16], ['100.64.0.0', 10], ['fc00::', 7], ['fec0::', 10]] },
  { kind: 'a link-local address (where cloud metadata services answer)', networks: [['169.254.0.0', 16], ['fe80::', 10]] },
  { kind: 'an unspecified address', networks: [['0.0.0.0', 8], ['::', 128]] },
  { kind: 'a multicast or broadcast address', networks: [['224.0.0.0', 4], ['ff00::', 8]] },
  {
    kind: 'a reserved or special-purpose address',
    networks: [
      ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24], ['240.0.0.0', 4],
      ['::', 96], ['100::', 64], ['2001::', 23], ['2001:db8::', 32], ['2002::', 16], ['64:ff9b:1::', 48],
    ],
  },
];

/** NAT64 (RFC 6052): the IPv4 address in the last 32 bits is where the packet goes. */
const NAT64 = new BlockList();
NAT64.addSubnet('64:ff9b::', 96, 'ipv6');

export class AddressPolicy {
  private readonly refused = REFUSED.map(({ kind, networks }) => ({ kind, list: blockList(networks) }));
  private readonly allowed: BlockList;

  /** `allowedNetworks`: CIDRs as the configuration normalised them (`10.0.0.0/8`, `fd00::/8`). */
  constructor(allowedNetworks: string[]) {
    this.allowed = blockList(allowedNetworks.map((network) => network.split('/') as [string, string]).map(([address, bits]) => [address, Number(bits)]));
  }

  /** Why `address` (an IP address) may not be reached, or null when it may. */
  refusal(address: string): string | null {
    const family = isIP(address);
    if (family === 0) return `${address} is not an IP address`;
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (this.allowed.check(address, type)) return null;
    // BlockList matches IPv4-mapped IPv6 (::ffff:a.b.c.d) against IPv4 ranges itself; NAT64 it does not.
    if (type === 'ipv6' && NAT64.check(address, 'ipv6')) {
      const v4 = embeddedIPv4(address);
      const inner = this.refusal(v4);
      return inner === null ? null : `${address} maps to ${inner}`;
    }
    const hit = this.refused.find(({ list }) => list.check(address, type));
    return hit ? `${address} is ${hit.kind}` : null;
  }
}

function blockList(networks: [string, number][]): BlockList {
  const list = new BlockList();
  for (const [address, bits] of networks) list.addSubnet(address, bits, isIP(address) === 4 ? 'ipv4' : 'ipv6');
  return list;
}

/** The IPv4 address in the last 32 bits of an IPv6 one. */
function embeddedIPv4(address: string): string {
  // The URL parser writes IPv6 in its canonical form, any embedded dotted quad as hex.
  const canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  const [head, tail = ''] = canonical.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = canonical.includes('::') ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right] : left;
  const [high, low] = groups.slice(6).map((group) => parseInt(group, 16));
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}
