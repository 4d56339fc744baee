/**
 * How wide one entry of a threat list may be. A line such as `0.0.0.0/0`
 * is valid, and would put every address on the list: an entry that covers
 * more public address space than a feed's `widest` prefix allows (by
 * default a /8 of IPv4 and a /16 of IPv6; a /4 of IPv6 for bogon lists,
 * which list unallocated space in large blocks: 3000::/4) refuses the whole list,
 * with the entry named. Public space is what iprecord answers a record
 * for: IPv4 less the special-purpose registry's private and reserved
 * ranges (FireHOL level 1's 224.0.0.0/3 covers none), IPv6 within
 * 2000::/3 less those ranges. `"widest": { "ipv4": 0, "ipv6": 0 }` in a
 * feed's configuration takes any entry.
 */

import { parseCidr } from '../../ip/address.js';
import { formatIp } from '../../ip/format.js';
import type { IpVersion } from '../../ip/parse.js';
import { fromBigInt, toBigInt } from '../../ip/ranges.js';
import { IPV4_REGISTRY, IPV6_REGISTRY } from '../../ip/special.js';
import type { Category } from '../../contract/template.js';

/** The shortest prefix of each family an entry's public space may match. */
export interface Widest {
  readonly ipv4: number;
  readonly ipv6: number;
}

/** The default for a feed of these categories. */
export function defaultWidest(categories: readonly Category[]): Widest {
  return { ipv4: 8, ipv6: categories.includes('bogon') ? 4 : 16 };
}

/** A family's ranges that are not public: the special-purpose registry's private and reserved ones, as [first, last]. */
function notPublic(registry: typeof IPV4_REGISTRY): [bigint, bigint][] {
  return registry
    .filter(([, kind]) => kind !== 'global')
    .map(([cidr]): [bigint, bigint] => {
      const { address, prefix } = parseCidr(cidr)!;
      const first = toBigInt(address);
      return [first, first + (1n << BigInt((address.version === 4 ? 32 : 128) - prefix)) - 1n];
    });
}

const V4_NOT_PUBLIC = notPublic(IPV4_REGISTRY);
const V6_NOT_PUBLIC = notPublic(IPV6_REGISTRY);
const V6_UNICAST: [bigint, bigint] = [0x2n << 124n, (0x4n << 124n) - 1n];

const overlap = (a: bigint, b: bigint, [c, d]: readonly [bigint, bigint]): bigint =>
  a > d || b < c ? 0n : (b < d ? b : d) - (a > c ? a : c) + 1n;

/** Addresses of [first, last] in public space (`unicast`: the family's public part before the registry's ranges are taken out). */
function publicSize(first: bigint, last: bigint, unicast: readonly [bigint, bigint], excluded: readonly [bigint, bigint][]): bigint {
  const a = first > unicast[0] ? first : unicast[0];
  const b = last < unicast[1] ? last : unicast[1];
  if (a > b) return 0n;
  return excluded.reduce((n, r) => n - overlap(a, b, r), b - a + 1n);
}

/** `first-last` as addresses. */
const span = (version: IpVersion, first: bigint, last: bigint) =>
  `${formatIp(version, fromBigInt(version, first))}-${formatIp(version, fromBigInt(version, last))}`;

/**
 * The first entry wider than `widest` allows, said in words, or null.
 * `v4`: ranges as start and end numbers; `v6`: eight words a range (start, then end).
 */
export function tooWide(
  v4: { readonly start: Uint32Array; readonly end: Uint32Array; readonly length: number },
  v6: { readonly words: Uint32Array; readonly length: number },
  widest: Widest,
): string | null {
  const cap4 = widest.ipv4 <= 0 ? Infinity : 2 ** (32 - widest.ipv4);
  for (let i = 0; i < v4.length; i++) {
    if (v4.end[i] - v4.start[i] + 1 <= cap4) continue;
    const [first, last] = [BigInt(v4.start[i]), BigInt(v4.end[i])];
    const size = publicSize(first, last, [0n, 0xffffffffn], V4_NOT_PUBLIC);
    if (size > BigInt(cap4)) return `the entry ${span(4, first, last)} covers ${size} public IPv4 addresses, more than a /${widest.ipv4}`;
  }
  if (widest.ipv6 <= 0) return null;
  const cap6 = 1n << BigInt(128 - widest.ipv6);
  const w = v6.words;
  for (let i = 0; i < v6.length; i++) {
    const o = i * 8;
    // Within one block of the cap's prefix (the first bits of start and end alike): no wider than it.
    if (widest.ipv6 <= 32 && w[o] >>> (32 - widest.ipv6) === w[o + 4] >>> (32 - widest.ipv6)) continue;
    const first = toBigInt({ version: 6, words: [w[o], w[o + 1], w[o + 2], w[o + 3]] });
    const last = toBigInt({ version: 6, words: [w[o + 4], w[o + 5], w[o + 6], w[o + 7]] });
    const size = publicSize(first, last, V6_UNICAST, V6_NOT_PUBLIC);
    if (size > cap6) return `the entry ${span(6, first, last)} covers public IPv6 space wider than a /${widest.ipv6}`;
  }
  return null;
}

/** What a build or an update says of a list refused for an entry too wide. */
export const refusal = (why: string): string => `refused: ${why} (a feed's "widest" setting takes wider entries: docs/threat-feeds.md)`;
