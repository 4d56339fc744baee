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
import { fromLayer, type Layer4 } from './prepare.js';
import { byValue6, overlay, RangeList, RangeList6, Ranks6, union } from './ranges.js';
import { COMPACT_LABELS, encodeThreat, type ThreatMeta } from './tree.js';

/** A feed as the compiler needs it (see `prepareFeed`). */
export interface CompileFeed {
  readonly categories: readonly Category[];
  readonly except: readonly Category[];
  /** Index into the metadata's blocklists, or -1. */
  readonly blocklist: number;
  /** IPv4 unions, one per hit count. */
  readonly v4: readonly Layer4[];
  /** IPv6 ranges as parsed, with hit counts. */
  readonly v6: { readonly words: Uint32Array; readonly value: Uint32Array };
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

/** Labels, interned by content; label 0 is "no feed". */
class Labels {
  private readonly keys: string[] = [];
  private readonly parts: { readonly flags: number; readonly counts: readonly number[]; readonly hits: number; readonly blocklists: readonly number[] }[] = [];
  private readonly ids = new Map<string, number>();

  constructor() {
    this.add(0, [0, 0, 0, 0, 0, 0, 0, 0], 0, []);
  }

  add(flags: number, counts: readonly number[], hits: number, blocklists: readonly number[]): number {
    const key = `${flags}|${counts.join(',')}|${hits}|${blocklists.join(',')}`;
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.keys.length;
      this.ids.set(key, id);
      this.keys.push(key);
      this.parts.push({ flags, counts: counts.map((n) => Math.min(255, n)), hits, blocklists });
    }
    return id;
  }

  /**
   * The table, labels numbered in order of their content (so that a build
   * does not depend on the order feeds were read in), and `rank`: the new
   * number of each label as `add` numbered it.
   */
  table(): { labels: Uint32Array; refs: Uint32Array; rank: Uint32Array } {
    const order = this.keys.map((_, i) => i);
    order.sort((a, b) => (a === 0 ? -1 : b === 0 ? 1 : this.keys[a] < this.keys[b] ? -1 : this.keys[a] > this.keys[b] ? 1 : 0));
    const rank = new Uint32Array(order.length);
    const words: number[] = [];
    const refs: number[] = [];
    order.forEach((id, at) => {
      rank[id] = at;
      const { flags, counts: c, hits, blocklists } = this.parts[id];
      words.push(flags, refs.length, blocklists.length, hits, c[0] | (c[1] << 8) | (c[2] << 16) | (c[3] << 24), c[4] | (c[5] << 8) | (c[6] << 16) | (c[7] << 24));
      refs.push(...blocklists);
    });
    return { labels: Uint32Array.from(words, (w) => w >>> 0), refs: Uint32Array.from(refs), rank };
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

/** Statistics of a compilation. */
export interface CompileStats {
  /** Feeds split by hit count. */
  readonly layers: number;
  readonly labels: number;
  /** Merged ranges (touching ranges with equal labels joined), per family. */
  readonly ranges: { readonly v4: number; readonly v6: number };
}

/**
 * Compiles feeds into the bytes of `threat.bin`. `meta` is written as given
 * (its blocklists are the table that `blocklist` ids point into).
 * `compactLabels` is for tests (to force the wide IPv4 entries).
 */
export function compileThreat(feeds: readonly CompileFeed[], meta: ThreatMeta, compactLabels = COMPACT_LABELS): { buffer: Buffer; stats: CompileStats } {
  const sets = new LayerSets();
  const layers: Layer[] = [];
  const parts4: RangeList[] = [];
  const lists6: RangeList6[] = [];
  const layers6: number[] = [];
  feeds.forEach((f, feed) => {
    for (const l of f.v4) {
      if (l.start.length === 0) continue;
      const part = fromLayer(l);
      part.value.fill(sets.intern([layers.push({ feed, hits: l.hits }) - 1]));
      parts4.push(part);
    }
    const v6 = new RangeList6(0);
    v6.words = f.v6.words;
    v6.value = f.v6.value;
    v6.length = f.v6.value.length;
    for (const [hits, list] of byValue6(v6)) {
      if (list.length === 0) continue;
      layers6.push(layers.push({ feed, hits }) - 1);
      lists6.push(list);
    }
  });
  const ranks = new Ranks6(lists6);
  const parts6 = ranks.lists.map((l, i) => union(l, sets.intern([layers6[i]])));

  const labels = new Labels();
  const labelOf = labeller(feeds, layers, sets, labels);
  const v4 = overlayAll(parts4, sets.union);
  const byRank = relabel(overlayAll(parts6, sets.union), labelOf);
  // Every label made before the file is laid out (the encoder maps IPv4 sets to labels as it writes).
  const seen = new Uint8Array(sets.sets.length);
  for (let i = 0; i < v4.length; i++) seen[v4.value[i]] = 1;
  const made = Array.from(seen, (s, set) => (s === 1 ? labelOf(set) : 0));
  const { labels: table, refs, rank } = labels.table();
  const label4 = made.map((l) => rank[l]);
  const v6 = new RangeList6(Math.max(16, byRank.length));
  for (let i = 0; i < byRank.length; i++) ranks.pushRange(v6, byRank.start[i], byRank.end[i], rank[byRank.value[i]]);

  const { buffer, ranges } = encodeThreat({ v4, label4: (set) => label4[set], v6, labels: table, refs, meta }, compactLabels);
  return { buffer, stats: { layers: layers.length, labels: table.length / 6, ranges } };
}
