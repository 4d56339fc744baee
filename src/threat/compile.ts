/**
 * Compiles feeds into one labelled partition of the address space per
 * family, and that into the bytes of `threat.bin`.
 *
 * 1. Each feed's ranges are sorted and joined into a union, one per hit
 *    count (a "layer": ipsum lists addresses with different counts); a
 *    layer's ranges carry the set {layer}.
 * 2. The layers are laid over one another, the two smallest first, until
 *    one partition is left whose every range carries the set of layers
 *    that list all of its addresses: the union of every covering entry.
 * 3. Each distinct set becomes a label: `except` applied (a feed is
 *    dropped where a feed of a category it excepts lists the address),
 *    then flags, evidence counts per category, the highest hit count and
 *    the blocklists. Touching ranges with equal labels are joined.
 *
 * IPv6 ranges are compiled the same way on ranks (`Ranks6`).
 */

import { CATEGORIES, categoryFlag, type Category } from '../record/threat.js';
import { overlay, RangeList, RangeList6, Ranks6, span, union } from './ranges.js';
import { COMPACT_LABELS, encodeThreat, type ThreatMeta } from './tree.js';

/** A feed as the compiler needs it. */
export interface CompileFeed {
  readonly categories: readonly Category[];
  readonly except: readonly Category[];
  /** Index into the metadata's blocklists, or -1. */
  readonly blocklist: number;
  /** Ranges with their hit counts (1 when the feed has none). */
  readonly v4: RangeList;
  readonly v6: RangeList6;
}

interface Layer {
  readonly feed: number;
  readonly hits: number;
}

/** Sets of layers, interned: 0 is the empty set. */
class LayerSets {
  readonly sets: number[][] = [[]];
  private readonly ids = new Map<string, number>([['', 0]]);
  private readonly unions = new Map<number, number>();

  intern(set: number[]): number {
    const key = set.join(',');
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.sets.length;
      this.sets.push(set);
      this.ids.set(key, id);
    }
    return id;
  }

  /** The union of two sets (as the overlay's `both`). */
  readonly union = (a: number, b: number): number => {
    if (a === b) return a;
    const key = a < b ? a * 0x4000000 + b : b * 0x4000000 + a;
    let id = this.unions.get(key);
    if (id === undefined) {
      id = this.intern([...new Set([...this.sets[a], ...this.sets[b]])].sort((x, y) => x - y));
      this.unions.set(key, id);
    }
    return id;
  };
}

/** Splits a list by value (hit count): one list per distinct value. */
function byValue<T extends RangeList | RangeList6>(list: T, make: () => T, copy: (from: T, i: number, to: T) => void): Map<number, T> {
  const out = new Map<number, T>();
  const first = list.length > 0 ? list.value[0] : 1;
  let one = true;
  for (let i = 1; i < list.length && one; i++) one = list.value[i] === first;
  if (one) return new Map([[first, list]]);
  for (let i = 0; i < list.length; i++) {
    const v = list.value[i];
    let to = out.get(v);
    if (to === undefined) out.set(v, (to = make()));
    copy(list, i, to);
  }
  return out;
}

/** Lays partitions over one another, the two smallest first. */
function overlayAll(parts: RangeList[], both: (a: number, b: number) => number): RangeList {
  const queue = [...parts];
  if (queue.length === 0) return new RangeList(16);
  while (queue.length > 1) {
    queue.sort((a, b) => a.length - b.length);
    const [a, b] = queue.splice(0, 2);
    queue.push(overlay(a, b, both));
  }
  return queue[0];
}

/** Labels: `LABEL_WORDS` words each, interned by content; label 0 is "no feed". */
class Labels {
  private readonly words: number[] = [];
  private readonly refs: number[] = [];
  private readonly ids = new Map<string, number>();

  constructor() {
    this.add(0, [0, 0, 0, 0, 0, 0, 0, 0], 0, []);
  }

  add(flags: number, counts: readonly number[], hits: number, blocklists: readonly number[]): number {
    const key = `${flags}|${counts.join(',')}|${hits}|${blocklists.join(',')}`;
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.ids.size;
      this.ids.set(key, id);
      const c = counts.map((n) => Math.min(255, n));
      this.words.push(flags, this.refs.length, blocklists.length, hits, c[0] | (c[1] << 8) | (c[2] << 16) | (c[3] << 24), c[4] | (c[5] << 8) | (c[6] << 16) | (c[7] << 24));
      this.refs.push(...blocklists);
    }
    return id;
  }

  table(): { labels: Uint32Array; refs: Uint32Array } {
    return { labels: Uint32Array.from(this.words, (w) => w >>> 0), refs: Uint32Array.from(this.refs) };
  }
}

/** The label of each layer set: `except` applied, then flags, counts, hits and blocklists. */
function labeller(feeds: readonly CompileFeed[], layers: readonly Layer[], sets: LayerSets, labels: Labels): (set: number) => number {
  const memo: number[] = [];
  return (set) => {
    let id = memo[set];
    if (id !== undefined) return id;
    const members = sets.sets[set];
    const listing = [...new Set(members.map((l) => layers[l].feed))];
    let hits = 0;
    for (const l of members) if (layers[l].hits > 1 && layers[l].hits > hits) hits = layers[l].hits;
    // A feed is dropped where another feed of a category it excepts lists the address.
    const kept = listing.filter((f) => {
      const ex = feeds[f].except;
      return ex.length === 0 || !listing.some((g) => g !== f && feeds[g].categories.some((c) => ex.includes(c)));
    });
    const counts = new Array<number>(CATEGORIES.length).fill(0);
    let flags = 0;
    const bls = new Set<number>();
    for (const f of kept) {
      for (const c of feeds[f].categories) {
        counts[CATEGORIES.indexOf(c)]++;
        flags |= categoryFlag(c);
      }
      if (feeds[f].blocklist >= 0) bls.add(feeds[f].blocklist);
    }
    // Hits count only while a listing feed is kept.
    id = kept.length === 0 ? 0 : labels.add(flags, counts, hits, [...bls].sort((a, b) => a - b));
    memo[set] = id;
    return id;
  };
}

/** Turns a partition of layer sets into a partition of labels: label 0 left out, equal neighbours joined. */
function relabel(part: RangeList, labelOf: (set: number) => number): RangeList {
  const out = new RangeList(Math.max(16, part.length));
  const { start, end, value } = part;
  const os = out.start;
  const oe = out.end;
  const ov = out.value;
  let k = 0;
  let lastSet = -1;
  let label = 0;
  for (let i = 0; i < part.length; i++) {
    const set = value[i];
    if (set !== lastSet) {
      lastSet = set;
      label = labelOf(set);
    }
    if (label === 0) continue;
    if (k > 0 && ov[k - 1] === label && oe[k - 1] + 1 === start[i]) oe[k - 1] = end[i];
    else {
      os[k] = start[i];
      oe[k] = end[i];
      ov[k++] = label;
    }
  }
  out.length = k;
  return out;
}

/** Addresses a partition on IPv6 ranks covers. */
function span6(part: RangeList, ranks: Ranks6): bigint {
  const big = (w: ArrayLike<number>) => (BigInt(w[0]) << 96n) | (BigInt(w[1]) << 64n) | (BigInt(w[2]) << 32n) | BigInt(w[3]);
  let total = 0n;
  for (let i = 0; i < part.length; i++) total += big(ranks.end(part.end[i])) - big(ranks.start(part.start[i])) + 1n;
  return total;
}

const first = (a: number) => a;

/** Distinct addresses that ranges cover, per family (IPv6 counts pass 2^53). */
export function coveredAddresses(v4: RangeList, v6: RangeList6): { v4: number; v6: bigint } {
  const ranks = new Ranks6([v6]);
  return { v4: span(union(v4, 0)), v6: span6(union(ranks.lists[0], 0), ranks) };
}

/** Statistics of a compilation. */
export interface CompileStats {
  /** Feeds split by hit count. */
  readonly layers: number;
  readonly labels: number;
  /** Merged ranges (touching ranges with equal labels joined), per family. */
  readonly ranges: { readonly v4: number; readonly v6: number };
}

/**
 * Compiles feeds into the bytes of `threat.bin`. `meta` makes the file's
 * metadata from the addresses each feed covers (its blocklists are the
 * table that `blocklist` ids point into). `compactLabels` is for tests (to
 * force the wide IPv4 entries).
 */
export function compileThreat(
  feeds: readonly CompileFeed[],
  meta: (covered: readonly bigint[]) => ThreatMeta,
  compactLabels = COMPACT_LABELS,
): { buffer: Buffer; stats: CompileStats } {
  const sets = new LayerSets();
  const layers: Layer[] = [];
  const parts4: RangeList[][] = [];
  const lists6: RangeList6[] = [];
  const layers6: number[] = [];
  feeds.forEach((f, feed) => {
    const v4 = byValue(
      f.v4,
      () => new RangeList(),
      (from, i, to) => to.push(from.start[i], from.end[i], from.value[i]),
    );
    parts4.push([]);
    for (const [hits, list] of v4) {
      if (list.length === 0) continue;
      const layer = layers.push({ feed, hits }) - 1;
      parts4[feed].push(union(list, sets.intern([layer])));
    }
    const v6 = byValue(
      f.v6,
      () => new RangeList6(),
      (from, i, to) => to.push(from.words.subarray(i * 8, i * 8 + 4), from.words.subarray(i * 8 + 4, i * 8 + 8), from.value[i]),
    );
    for (const [hits, list] of v6) {
      if (list.length === 0) continue;
      layers6.push(layers.push({ feed, hits }) - 1);
      lists6.push(list);
    }
  });
  const ranks = new Ranks6(lists6);
  const parts6 = ranks.lists.map((l, i) => union(l, sets.intern([layers6[i]])));

  const covered = feeds.map((_, feed) => {
    const own4 = parts4[feed];
    const own6 = parts6.filter((_p, i) => layers[layers6[i]].feed === feed);
    const v4 = own4.length === 0 ? 0 : span(own4.length === 1 ? own4[0] : overlayAll(own4, first));
    const v6 = own6.length === 0 ? 0n : span6(own6.length === 1 ? own6[0] : overlayAll(own6, first), ranks);
    return BigInt(v4) + v6;
  });

  const labels = new Labels();
  const labelOf = labeller(feeds, layers, sets, labels);
  const v4 = relabel(overlayAll(parts4.flat(), sets.union), labelOf);
  const byRank = relabel(overlayAll(parts6, sets.union), labelOf);
  const v6 = new RangeList6(Math.max(16, byRank.length));
  for (let i = 0; i < byRank.length; i++) v6.push(ranks.start(byRank.start[i]), ranks.end(byRank.end[i]), byRank.value[i]);

  const { labels: table, refs } = labels.table();
  const buffer = encodeThreat({ v4, v6, labels: table, refs, meta: meta(covered) }, compactLabels);
  return { buffer, stats: { layers: layers.length, labels: table.length / 6, ranges: { v4: v4.length, v6: v6.length } } };
}
