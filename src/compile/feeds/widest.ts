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

import { IPV4_REGISTRY, IPV6_REGISTRY } from '../../ip/special.js';
import type { Category } from '../../record/threat.js';

/** The shortest prefix of each family an entry's public space may match. */
export interface Widest {
  readonly ipv4: number;
  readonly ipv6: number;
}

/** The default for a feed of these categories. */
export function defaultWidest(categories: readonly Category[]): Widest {
  return { ipv4: 8, ipv6: categories.includes('bogon') ? 4 : 16 };
}

/** A family's ranges that are not public, as [first, last] pairs of bigints, sorted. */
function notPublic(registry: typeof IPV4_REGISTRY, bits: number): [bigint, bigint][] {
  return registry
    .filter(([, kind]) => kind !== 'global')
    .map(([cidr]): [bigint, bigint] => {
      const [text, prefix] = cidr.split('/');
      const first = bits === 32 ? text.split('.').reduce((n, p) => (n << 8n) | BigInt(p), 0n) : words6(expand6(text));
      return [first, first + (1n << BigInt(bits - Number(prefix))) - 1n];
    });
}

/** The eight groups of an IPv6 address's text (a registry's compressed form). */
function expand6(text: string): number[] {
  const [head, tail = ''] = text.split('::');
  const a = head === '' ? [] : head.split(':').map((g) => Number.parseInt(g, 16));
  const b = tail === '' ? [] : tail.split(':').map((g) => Number.parseInt(g, 16));
  return [...a, ...new Array<number>(8 - a.length - b.length).fill(0), ...b];
}

const words6 = (groups: readonly number[]): bigint => groups.reduce((n, g) => (n << 16n) | BigInt(g), 0n);

const V4_NOT_PUBLIC = notPublic(IPV4_REGISTRY, 32);
const V6_NOT_PUBLIC = notPublic(IPV6_REGISTRY, 128);
const V6_UNICAST: [bigint, bigint] = [0x2n << 124n, (0x4n << 124n) - 1n];

const overlap = (a: bigint, b: bigint, [c, d]: readonly [bigint, bigint]): bigint => (a > d || b < c ? 0n : (b < d ? b : d) - (a > c ? a : c) + 1n);

/** Addresses of [first, last] in public space (`unicast`: the family's public part before the registry's ranges are taken out). */
function publicSize(first: bigint, last: bigint, unicast: readonly [bigint, bigint], excluded: readonly [bigint, bigint][]): bigint {
  const a = first > unicast[0] ? first : unicast[0];
  const b = last < unicast[1] ? last : unicast[1];
  if (a > b) return 0n;
  return excluded.reduce((n, r) => n - overlap(a, b, r), b - a + 1n);
}

const v4Text = (n: bigint) => [24n, 16n, 8n, 0n].map((s) => (n >> s) & 255n).join('.');
const v6Text = (n: bigint) =>
  Array.from({ length: 8 }, (_, i) => ((n >> BigInt(112 - 16 * i)) & 0xffffn).toString(16))
    .join(':')
    .replace(/(^|:)0(:0)+(:|$)/, '::');

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
    const size = publicSize(BigInt(v4.start[i]), BigInt(v4.end[i]), [0n, 0xffffffffn], V4_NOT_PUBLIC);
    if (size > BigInt(cap4)) return `the entry ${v4Text(BigInt(v4.start[i]))}-${v4Text(BigInt(v4.end[i]))} covers ${size} public IPv4 addresses, more than a /${widest.ipv4}`;
  }
  if (widest.ipv6 <= 0) return null;
  const cap6 = 1n << BigInt(128 - widest.ipv6);
  const w = v6.words;
  for (let i = 0; i < v6.length; i++) {
    const o = i * 8;
    // Within one block of the cap's prefix (the first bits of start and end alike): no wider than it.
    if (widest.ipv6 <= 32 && w[o] >>> (32 - widest.ipv6) === w[o + 4] >>> (32 - widest.ipv6)) continue;
    const first = words6([w[o] >>> 16, w[o] & 0xffff, w[o + 1] >>> 16, w[o + 1] & 0xffff, w[o + 2] >>> 16, w[o + 2] & 0xffff, w[o + 3] >>> 16, w[o + 3] & 0xffff]);
    const last = words6([w[o + 4] >>> 16, w[o + 4] & 0xffff, w[o + 5] >>> 16, w[o + 5] & 0xffff, w[o + 6] >>> 16, w[o + 6] & 0xffff, w[o + 7] >>> 16, w[o + 7] & 0xffff]);
    const size = publicSize(first, last, V6_UNICAST, V6_NOT_PUBLIC);
    if (size > cap6) return `the entry ${v6Text(first)}-${v6Text(last)} covers public IPv6 space wider than a /${widest.ipv6}`;
  }
  return null;
}

/** What a build or an update says of a list refused for an entry too wide. */
export const refusal = (why: string): string => `refused: ${why} (a feed's "widest" setting takes wider entries: docs/threat-feeds.md)`;
