/**
 * The ranges an export holds: a compiled dataset's partition of each
 * family, split where a special-purpose range of the IANA registries
 * starts or ends, without the ranges iprecord answers with an error
 * (private, reserved) and, for IPv6, without ::/96, ::ffff:0:0/96 and
 * 64:ff9b::/96, whose addresses iprecord answers as IPv4 (`ip/embedded.ts`;
 * an MMDB export files IPv4 there), and split where the route changes: a dataset range may run over
 * several networks of one prefix length and one owner (19.64.0.0/10 and
 * 19.128.0.0/10), whose addresses each answer their own `asn.route`.
 * Within one such range every address has the same record, route
 * included.
 */

import { NO_ROUTE, type Dataset } from '../dataset/format.js';
import { toBigInt } from '../ip/ranges.js';
import type { IpVersion } from '../ip/parse.js';
import { IPV4_CARRIERS } from '../ip/embedded.js';
import { IPV4_REGISTRY, IPV6_REGISTRY, type Entry } from '../ip/special.js';

const V4_LAST = (1n << 32n) - 1n;
const V6_LAST = (1n << 128n) - 1n;
/** ::ffff:0:0/96, where IPv4-mapped addresses are. */
const MAPPED = 0xffffn << 32n;

/** A registry network as numbers of its family. */
interface Special {
  readonly start: bigint;
  readonly end: bigint;
  readonly len: number;
  readonly global: boolean;
}

/** The first address of a registry network, as a number of its family. */
function networkStart(text: string, bits: number): bigint {
  if (bits === 32) return text.split('.').reduce((n, o) => (n << 8n) | BigInt(o), 0n);
  const [head, tail = ''] = text.split('::');
  const groups = (s: string) => (s === '' ? [] : s.split(':'));
  const h = groups(head);
  const t = groups(tail);
  const all = [...h, ...new Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return all.reduce((n, g) => (n << 16n) | BigInt(parseInt(g, 16)), 0n);
}

/** Where a family's answer may change (sorted), and whether the addresses from each such place on are left out. */
interface Cuts {
  readonly at: readonly bigint[];
  readonly skip: readonly boolean[];
}

/**
 * The places in a family where a special range, or a block left out,
 * starts or ends; from each, whether the addresses are left out: the most
 * specific registry network that holds them is private or reserved (a
 * global block inside a reserved one is not), or they are in a block left
 * out.
 */
function cutsOf(registry: readonly Entry[], bits: number, leftOut: readonly (readonly [bigint, bigint])[]): Cuts {
  const specials: Special[] = registry.map(([cidr, kind]) => {
    const [text, len] = cidr.split('/');
    const start = networkStart(text, bits);
    return { start, end: start + (1n << BigInt(bits - Number(len))) - 1n, len: Number(len), global: kind === 'global' };
  });
  const places = new Set<bigint>([0n]);
  for (const x of specials) places.add(x.start).add(x.end + 1n);
  for (const [a, b] of leftOut) places.add(a).add(b + 1n);
  const at = [...places].filter((p) => p < 1n << BigInt(bits)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const skip = at.map((n) => {
    if (leftOut.some(([a, b]) => n >= a && n <= b)) return true;
    let best: Special | null = null;
    for (const x of specials) if (n >= x.start && n <= x.end && (best === null || x.len > best.len)) best = x;
    return best !== null && !best.global;
  });
  return { at, skip };
}

let cuts: Record<IpVersion, Cuts> | null = null;

/** An exportable range: its family, first and last address (numbers of the family: IPv4 32-bit, IPv6 128-bit), the ref of its dataset range, and how far the walk is (the share of the dataset's ranges before it). */
export interface ExportRange {
  readonly version: IpVersion;
  readonly first: bigint;
  readonly last: bigint;
  readonly ref: number;
  readonly done: number;
}

/** Each exportable range of a dataset, in address order, IPv4 first; or of one family. */
export function* exportRanges(ds: Dataset, family?: IpVersion): Generator<ExportRange> {
  cuts ??= {
    4: cutsOf(IPV4_REGISTRY, 32, []),
    6: cutsOf(IPV6_REGISTRY, 128, [
      [MAPPED, MAPPED + (1n << 32n) - 1n],
      ...IPV4_CARRIERS.map((w): [bigint, bigint] => {
        const start = toBigInt({ version: 6, words: [...w] });
        return [start, start + (1n << 32n) - 1n];
      }),
    ]),
  };
  const total = ds.starts4.length + ds.starts6.length / 4;
  function* emit(version: IpVersion, lo: bigint, hi: bigint, ref: number, seq: number): Generator<ExportRange> {
    const c = cuts![version];
    // The place at or before the range's start says whether its first piece is left out; each later place inside it starts a piece.
    let i = lowerBound(c.at, lo + 1n) - 1;
    let start = lo;
    for (;;) {
      const next = i + 1 < c.at.length && c.at[i + 1] <= hi ? c.at[i + 1] : null;
      const end = next === null ? hi : next - 1n;
      if (!c.skip[i]) yield* byRoute(version, start, end, ref, seq / total);
      if (next === null) break;
      start = next;
      i++;
    }
  }
  const n4 = ds.starts4.length;
  if (family !== 6)
    for (let i = 0; i < n4; i++)
      yield* emit(4, BigInt(ds.starts4[i]), i + 1 < n4 ? BigInt(ds.starts4[i + 1]) - 1n : V4_LAST, ds.refs4[i], i);
  if (family === 4) return;
  const s = ds.starts6;
  const n6 = s.length / 4;
  const at = (i: number) => toBigInt({ version: 6, words: [s[i * 4], s[i * 4 + 1], s[i * 4 + 2], s[i * 4 + 3]] });
  let next = n6 > 0 ? at(0) : 0n;
  for (let i = 0; i < n6; i++) {
    const lo = next;
    next = i + 1 < n6 ? at(i + 1) : 0n;
    yield* emit(6, lo, i + 1 < n6 ? next - 1n : V6_LAST, ds.refs6[i], n4 + i);
  }
}

/** A range in pieces that each lie in one network of its route's prefix length (the route is the address masked to it). */
function* byRoute(version: IpVersion, first: bigint, last: bigint, ref: number, done: number): Generator<ExportRange> {
  const prefix = ref & 255;
  if (prefix === NO_ROUTE || prefix === 0) {
    yield { version, first, last, ref, done };
    return;
  }
  const size = 1n << BigInt((version === 4 ? 32 : 128) - prefix);
  for (let a = first; a <= last;) {
    const networkEnd = (a / size + 1n) * size - 1n;
    const b = networkEnd < last ? networkEnd : last;
    yield { version, first: a, last: b, ref, done };
    a = b + 1n;
  }
}

/** The first index of a sorted list whose value is at least `x`. */
function lowerBound(a: readonly bigint[], x: bigint): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
