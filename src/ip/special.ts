/**
 * Special-purpose address ranges, from the IANA IPv4 and IPv6 Special-Purpose
 * Address Registries (RFC 6890 and its updates) and the IANA IPv6 Address
 * Space registry.
 *
 * Each range that the registry marks "not globally reachable" is either
 * `private` (a network's own addresses: RFC 1918, loopback, link-local,
 * shared address space, unique local) or `reserved` (everything else:
 * documentation, benchmarking, multicast, 0/8, 240/4, ...). The service
 * answers both with an error instead of a record (CONTRACT.md). Ranges the
 * registry marks globally reachable inside a larger reserved block are listed
 * as `global`: the most specific range wins.
 *
 * IPv6 space outside 2000::/3 that no registry lists ("Reserved by IETF" in
 * the address space registry) is unallocated: it answers with a record whose
 * `is_bogon` is true.
 */

import { parseIp } from './address.js';
import type { IpVersion } from './parse.js';

export const enum SpecialKind {
  None = 0,
  Private = 1,
  Reserved = 2,
  /** Unallocated: a record is answered, with `is_bogon`. */
  Unallocated = 3,
}

interface Range {
  /** Four words of the network, masked. */
  readonly words: readonly [number, number, number, number];
  readonly prefix: number;
  readonly kind: SpecialKind;
  readonly name: string;
}

export type Entry = readonly [cidr: string, kind: 'private' | 'reserved' | 'global', name: string];

/** IANA IPv4 Special-Purpose Address Registry (2025 edition). */
export const IPV4_REGISTRY: readonly Entry[] = [
  ['0.0.0.0/8', 'reserved', '"This network" (RFC 791)'],
  ['10.0.0.0/8', 'private', 'Private-Use (RFC 1918)'],
  ['100.64.0.0/10', 'private', 'Shared Address Space (RFC 6598)'],
  ['127.0.0.0/8', 'private', 'Loopback (RFC 1122)'],
  ['169.254.0.0/16', 'private', 'Link Local (RFC 3927)'],
  ['172.16.0.0/12', 'private', 'Private-Use (RFC 1918)'],
  ['192.0.0.0/24', 'reserved', 'IETF Protocol Assignments (RFC 6890)'],
  ['192.0.0.9/32', 'global', 'Port Control Protocol Anycast (RFC 7723)'],
  ['192.0.0.10/32', 'global', 'Traversal Using Relays around NAT Anycast (RFC 8155)'],
  ['192.0.2.0/24', 'reserved', 'Documentation (TEST-NET-1) (RFC 5737)'],
  ['192.88.99.0/24', 'reserved', 'Deprecated 6to4 Relay Anycast (RFC 7526)'],
  ['192.168.0.0/16', 'private', 'Private-Use (RFC 1918)'],
  ['198.18.0.0/15', 'reserved', 'Benchmarking (RFC 2544)'],
  ['198.51.100.0/24', 'reserved', 'Documentation (TEST-NET-2) (RFC 5737)'],
  ['203.0.113.0/24', 'reserved', 'Documentation (TEST-NET-3) (RFC 5737)'],
  ['224.0.0.0/4', 'reserved', 'Multicast (RFC 5771)'],
  ['240.0.0.0/4', 'reserved', 'Reserved (RFC 1112)'],
];

/** IANA IPv6 Special-Purpose Address Registry (2025 edition). */
export const IPV6_REGISTRY: readonly Entry[] = [
  ['::/128', 'reserved', 'Unspecified Address (RFC 4291)'],
  ['::1/128', 'private', 'Loopback Address (RFC 4291)'],
  ['64:ff9b:1::/48', 'private', 'IPv4-IPv6 Translation, local use (RFC 8215)'],
  ['100::/64', 'reserved', 'Discard-Only Address Block (RFC 6666)'],
  ['100:0:0:1::/64', 'reserved', 'Dummy IPv6 Prefix (RFC 9780)'],
  ['2001::/23', 'reserved', 'IETF Protocol Assignments (RFC 2928)'],
  ['2001::/32', 'global', 'TEREDO (RFC 4380)'],
  ['2001:1::1/128', 'global', 'Port Control Protocol Anycast (RFC 7723)'],
  ['2001:1::2/128', 'global', 'Traversal Using Relays around NAT Anycast (RFC 8155)'],
  ['2001:1::3/128', 'global', 'DNS-SD Service Registration Protocol Anycast (RFC 9665)'],
  ['2001:3::/32', 'global', 'AMT (RFC 7450)'],
  ['2001:4:112::/48', 'global', 'AS112-v6 (RFC 7535)'],
  ['2001:20::/28', 'global', 'ORCHIDv2 (RFC 7343)'],
  ['2001:30::/28', 'global', 'Drone Remote ID Protocol Entity Tags (RFC 9374)'],
  ['2001:db8::/32', 'reserved', 'Documentation (RFC 3849)'],
  ['3fff::/20', 'reserved', 'Documentation (RFC 9637)'],
  ['5f00::/16', 'reserved', 'Segment Routing (SRv6) SIDs (RFC 9602)'],
  ['fc00::/7', 'private', 'Unique-Local (RFC 4193)'],
  ['fe80::/10', 'private', 'Link-Local Unicast (RFC 4291)'],
  ['fec0::/10', 'reserved', 'Deprecated site-local (RFC 3879)'],
  ['ff00::/8', 'reserved', 'Multicast (RFC 4291)'],
];

function toRange(entry: Entry, version: IpVersion, parse: (text: string) => number[]): Range {
  const [cidr, kind, name] = entry;
  const slash = cidr.indexOf('/');
  const prefix = Number(cidr.slice(slash + 1));
  const w = parse(cidr.slice(0, slash));
  const k = kind === 'private' ? SpecialKind.Private : kind === 'reserved' ? SpecialKind.Reserved : SpecialKind.None;
  const bits = version === 4 ? prefix + 96 : prefix;
  return { words: [w[0], w[1], w[2], w[3]], prefix: bits, kind: k, name };
}

function covers(range: Range, words: ArrayLike<number>): boolean {
  let bits = range.prefix;
  for (let i = 0; i < 4 && bits > 0; i++, bits -= 32) {
    const mask = bits >= 32 ? 0xffffffff : (0xffffffff << (32 - bits)) >>> 0;
    if ((words[i] & mask) >>> 0 !== range.words[i]) return false;
  }
  return true;
}

/** Special ranges of each family, most specific first. */
export interface SpecialTable {
  readonly v4: readonly Range[];
  readonly v6: readonly Range[];
  /**
   * Per value of an address's first 16 bits, 1 when some range (or, for
   * IPv6, unallocated space) may cover it: most addresses are classified
   * with one array read.
   */
  readonly hint4: Uint8Array;
  readonly hint6: Uint8Array;
}

/** Marks the 16-bit prefixes that a range intersects. */
function markHint(hint: Uint8Array, first: number, prefix: number): void {
  const top = first >>> 16;
  if (prefix >= 16) hint[top] = 1;
  else hint.fill(1, top, top + (1 << (16 - prefix)));
}

let table: SpecialTable | null = null;

/** The registries' table, made at its first use (not when the module loads) and kept: the engine and the compiler classify with it. */
export function specialTable(): SpecialTable {
  table ??= buildSpecialTable((text) => [...(parseIp(text)?.words ?? [0, 0, 0, 0])]);
  return table;
}

/** Builds the table with the address parser. */
function buildSpecialTable(parse: (text: string) => number[]): SpecialTable {
  const bySpecificity = (a: Range, b: Range) => b.prefix - a.prefix;
  const v4 = IPV4_REGISTRY.map((e) => toRange(e, 4, parse)).sort(bySpecificity);
  const v6 = IPV6_REGISTRY.map((e) => toRange(e, 6, parse)).sort(bySpecificity);
  const hint4 = new Uint8Array(1 << 16);
  const hint6 = new Uint8Array(1 << 16);
  for (const r of v4) markHint(hint4, r.words[3], r.prefix - 96);
  for (const r of v6) markHint(hint6, r.words[0], r.prefix);
  // Outside 2000::/3 (0x2000..0x3fff) everything is unallocated or special.
  hint6.fill(1, 0, 0x2000);
  hint6.fill(1, 0x4000);
  return { v4, v6, hint4, hint6 };
}

/**
 * The kind of an address. For IPv4 `words[0..2]` are zero. IPv6 outside
 * 2000::/3 and every listed range is unallocated.
 */
export function classify(table: SpecialTable, version: IpVersion, words: ArrayLike<number>): SpecialKind {
  if ((version === 4 ? table.hint4[words[3] >>> 16] : table.hint6[words[0] >>> 16]) === 0) return SpecialKind.None;
  const ranges = version === 4 ? table.v4 : table.v6;
  for (let i = 0; i < ranges.length; i++) {
    if (covers(ranges[i], words)) return ranges[i].kind;
  }
  if (version === 6 && words[0] >>> 29 !== 1) return SpecialKind.Unallocated;
  return SpecialKind.None;
}

/** Name of the registry entry that covers the address, for messages and `info()`. */
export function specialName(table: SpecialTable, version: IpVersion, words: ArrayLike<number>): string | null {
  const ranges = version === 4 ? table.v4 : table.v6;
  for (const r of ranges) if (covers(r, words)) return r.name;
  return null;
}
