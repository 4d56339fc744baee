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
 *    then the feeds' origins: feeds listing the address that carry a
 *    common origin (a list one includes and the other is, or both include)
 *    are one piece of evidence, counted once per category; then flags, evidence counts per category, the highest hit count and
 *    the blocklists. Touching ranges with equal labels are joined.
 *
 * IPv4 is compiled in two parts of the address space (the lower one on a
 * worker thread when the builder has one, split by `splitBucket`), each
 * with its own sets and labels; the labels are then put in one table,
 * numbered by content, so the file is the same on any number of threads.
 * IPv6 ranges are compiled the same way on ranks (`Ranks6`), beside the
 * upper part.
 *
 * Over 300 lines: its three steps work over one partition and its layers; each is a function of its own.
 */

import type { Category } from '../../contract/template.js';
import { coverage4, fromLayer, join4, span6, type Layer4 } from './prepare.js';
import { byValue, type RangeList, union } from './ranges.js';
import { RangeList6, Ranks6 } from './ranges6.js';
import type { ThreatMeta } from '../../dataset/threat-meta.js';
import { copyShifted, encodeSlice4, encodeThreat } from './tree-encode.js';
import { BUCKETS, COMPACT_LABELS, LABEL_WORDS, type Slice4 } from './tree-format.js';
import { labeller, LayerSets, Labels, overlayAll, relabel, type Layer, type LabelContent, type Rules } from './labels.js';

/** A feed as the compiler needs it (see `prepareFeed`). */
export interface CompileFeed {
  readonly categories: readonly Category[];
  readonly except: readonly Category[];
  /**
   * The origins whose listings this feed carries, numbered: its own and
   * those of the lists it aggregates, loaded or not. Feeds listing an
   * address that share an origin count as one piece of evidence there
   * (FireHOL's levels 1 to 3 each carry a DShield list). Absent: its own
   * origin only.
   */
  readonly origins?: readonly number[];
  /** Index into the metadata's blocklists, or -1. */
  readonly blocklist: number;
  /** IPv4 unions, one per hit count. */
  readonly v4: readonly Layer4[];
  /** IPv6 ranges as parsed, with hit counts. */
  readonly v6: { readonly words: Uint32Array; readonly value: Uint32Array };
  /**
   * Count the addresses it covers here (a list prepared in parts): each
   * thread counts its part of the IPv4 space, and the total goes into the
   * metadata's feed of the same index.
   */
  readonly count?: boolean;
}

/** Statistics of a compilation. */
export interface CompileStats {
  /** Feeds split by hit count. */
  readonly layers: number;
  readonly labels: number;
  /** Merged ranges (touching ranges with equal labels joined), per family. */
  readonly ranges: { readonly v4: number; readonly v6: number };
}

/** What one thread compiles: IPv4 layers cut to buckets `from` to `to` (exclusive). */
export interface SliceInput {
  readonly rules: readonly Rules[];
  /** Each layer's feed, hit count and sorted, disjoint ranges within the slice. */
  readonly layers: readonly (Layer & { readonly start: Uint32Array; readonly end: Uint32Array })[];
  readonly from: number;
  readonly to: number;
  /** Feeds whose addresses within the slice to count. */
  readonly count: readonly number[];
}

export interface SliceOutput {
  readonly slice: Slice4;
  /** The slice's labels, by the numbers its entries use. */
  readonly labels: readonly LabelContent[];
  /** Addresses within the slice of each feed of `count`. */
  readonly covered: readonly number[];
}

/** Compiles one slice of IPv4: layers laid over one another, labelled, encoded. */
export function compileSlice(input: SliceInput): SliceOutput {
  const layers = joinParts4(input.layers);
  const sets = new LayerSets();
  const parts: RangeList[] = [];
  layers.forEach((l, i) => {
    const part = fromLayer(l);
    part.value.fill(sets.intern([i]));
    parts.push(part);
  });
  const labels = new Labels();
  const labelOf = labeller(input.rules, layers, sets, labels);
  const slice = encodeSlice4(overlayAll(parts, sets.union), labelOf, input.from, input.to);
  const covered = input.count.map((feed) => coverage4(layers.filter((l) => l.feed === feed)));
  return { slice, labels: labels.contents(), covered };
}

/**
 * The non-empty layers, those of one feed and hit count (the parts of a
 * list read in parts) joined into one: a merge of two sorted lists, where
 * laying them over one another as two layers cost an overlay step, sets
 * that alternate with every address, and their common addresses counted
 * apart.
 */
function joinParts4(layers: SliceInput['layers']): SliceInput['layers'] {
  const out: (Layer & Layer4)[] = [];
  const at = new Map<string, number>();
  for (const l of layers) {
    if (l.start.length === 0) continue;
    const key = `${l.feed} ${l.hits}`;
    const k = at.get(key);
    if (k === undefined) {
      at.set(key, out.length);
      out.push(l);
    } else out[k] = { feed: l.feed, ...join4(out[k], l) };
  }
  return out;
}

/** The typed arrays of a slice's answer, to move between threads. */
export function sliceTransferables(o: SliceOutput): ArrayBuffer[] {
  return [o.slice.index.buffer as ArrayBuffer, o.slice.keys.buffer as ArrayBuffer, o.slice.labels.buffer as ArrayBuffer];
}

/** A layer's ranges within [lo, hi] (cut at the edges), copied. */
function cut(l: Layer4, lo: number, hi: number): { start: Uint32Array; end: Uint32Array } {
  const n = l.start.length;
  // First range ending at or after lo; first range starting after hi.
  let a = 0;
  let b = n;
  while (a < b) {
    const m = (a + b) >>> 1;
    if (l.end[m] < lo) a = m + 1;
    else b = m;
  }
  const i = a;
  b = n;
  while (a < b) {
    const m = (a + b) >>> 1;
    if (l.start[m] <= hi) a = m + 1;
    else b = m;
  }
  const start = l.start.slice(i, a);
  const end = l.end.slice(i, a);
  if (start.length > 0) {
    if (start[0] < lo) start[0] = lo;
    if (end[end.length - 1] > hi) end[end.length - 1] = hi;
  }
  return { start, end };
}

/**
 * Where the IPv4 space is split between the other thread (below) and this
 * one, which also compiles IPv6 meanwhile: the bucket below which half the
 * IPv4 ranges lie, and three more per IPv6 range (an IPv6 range costs
 * about six IPv4 ones: the bench's build, 71 feeds and 6 million
 * addresses, compiles its IPv6 in 100-190 ms against 850-950 ms of IPv4),
 * at most three quarters. With halves of the address space, the other
 * thread waited 150-200 ms for this one's IPv6. The bytes written do not
 * depend on it.
 */
export function splitBucket(layers: readonly Layer4[], ranges6: number): number {
  let total = 0;
  for (const l of layers) total += l.start.length;
  if (total === 0) return BUCKETS / 2;
  const target = Math.min(0.75 * total, 0.5 * total + 3 * ranges6);
  // IPv4 ranges that start below bucket `b` (layers are in order of their starts).
  const below = (b: number) => {
    let n = 0;
    const edge = b * 4096;
    for (const l of layers) {
      let lo = 0;
      let hi = l.start.length;
      while (lo < hi) {
        const m = (lo + hi) >>> 1;
        if (l.start[m] < edge) lo = m + 1;
        else hi = m;
      }
      n += lo;
    }
    return n;
  };
  let lo = 1;
  let hi = BUCKETS - 1;
  while (lo < hi) {
    const m = (lo + hi) >>> 1;
    if (below(m) < target) lo = m + 1;
    else hi = m;
  }
  return lo;
}

/** Runs a slice on another thread: the answer, or a rejection (then it runs here). */
export type SliceRunner = (input: SliceInput, transfer: ArrayBuffer[]) => Promise<SliceOutput>;

/**
 * Compiles feeds into the bytes of `threat.bin`. `meta` is written as given
 * (its blocklists are the table that `blocklist` ids point into), with the
 * addresses of the feeds marked `count` counted here; the metadata written
 * is returned. IPv4 is compiled in two parts of the address space, the
 * lower one on `other` (another thread) when given, split where the two
 * threads' work comes out even (`splitBucket`); labels are numbered by
 * their content, so the bytes are the same either way. `compactLabels` is
 * for tests (to force the wide IPv4 labels).
 */
export async function compileThreat(
  feeds: readonly CompileFeed[],
  meta: ThreatMeta,
  options: { readonly other?: SliceRunner; readonly compactLabels?: number } = {},
): Promise<{ buffer: Buffer; meta: ThreatMeta; stats: CompileStats }> {
  // A feed with no origins stated has one of its own, numbered past every stated one.
  const own = Math.max(0, ...feeds.flatMap((f) => f.origins ?? [])) + 1;
  const rules: Rules[] = feeds.map((f, k) => ({
    categories: f.categories,
    except: f.except,
    origins: f.origins ?? [own + k],
    blocklist: f.blocklist,
  }));
  const layers4: (Layer & Layer4)[] = [];
  feeds.forEach((f, feed) => {
    for (const l of f.v4) if (l.start.length > 0) layers4.push({ feed, hits: l.hits, start: l.start, end: l.end });
  });
  const ranges6 = feeds.reduce((n, f) => n + f.v6.value.length, 0);
  const mid = options.other === undefined ? BUCKETS / 2 : splitBucket(layers4, ranges6);
  const count = feeds.flatMap((f, i) => (f.count === true ? [i] : []));
  const sliceOf = (from: number, to: number): SliceInput => ({
    rules,
    layers: layers4.map((l) => ({ feed: l.feed, hits: l.hits, ...cut(l, from * 4096, to * 4096 - 1) })),
    from,
    to,
    count,
  });
  const lowInput = sliceOf(0, mid);
  const transfer = lowInput.layers.flatMap((l) => [l.start.buffer as ArrayBuffer, l.end.buffer as ArrayBuffer]);
  const low = options.other === undefined ? null : options.other(lowInput, transfer).catch(() => null);
  const high = compileSlice(sliceOf(mid, BUCKETS));

  // IPv6 here, while the other thread works.
  const labels = new Labels();
  const six = compileV6(feeds, rules, labels);

  const lowOut = (low === null ? null : await low) ?? compileSlice(options.other === undefined ? lowInput : sliceOf(0, mid));
  // One table: every slice's labels by content, numbered by content.
  const global = (out: SliceOutput) => out.labels.map((c) => labels.add(c.flags, c.counts, c.hits, c.blocklists));
  const lowIds = global(lowOut);
  const highIds = global(high);
  const { labels: table, refs, rank } = labels.table();
  const wide = table.length / LABEL_WORDS > (options.compactLabels ?? COMPACT_LABELS);
  const four = joinV4(lowOut, lowIds, high, highIds, rank, mid);

  const { ranks, byRank } = six;
  const v6 = new RangeList6(Math.max(16, byRank.length));
  for (let i = 0; i < byRank.length; i++) ranks.pushRange(v6, byRank.start[i], byRank.end[i], rank[byRank.value[i]]);
  // The coverage of feeds counted here: both parts, and IPv6.
  const metaFeeds = [...meta.feeds];
  count.forEach((f, k) => {
    const v6 = span6(RangeList6.over(feeds[f].v6.words, feeds[f].v6.value));
    metaFeeds[f] = { ...metaFeeds[f], addresses: (BigInt(lowOut.covered[k] + high.covered[k]) + v6).toString() };
  });
  const final: ThreatMeta = count.length === 0 ? meta : { ...meta, feeds: metaFeeds };
  const buffer = encodeThreat({ v4: { ...four, wide }, v6, labels: table, refs, meta: final });
  return {
    buffer,
    meta: final,
    stats: { layers: layers4.length + six.layers, labels: table.length / LABEL_WORDS, ranges: { v4: four.ranges, v6: v6.length } },
  };
}

/** The IPv6 ranges of every feed, overlaid and labelled (`labels` numbers them): by rank, with the ranks to write them back. */
function compileV6(feeds: readonly CompileFeed[], rules: readonly Rules[], labels: Labels) {
  const sets = new LayerSets();
  const layers: Layer[] = [];
  const lists6: RangeList6[] = [];
  const layers6: number[] = [];
  feeds.forEach((f, feed) => {
    for (const [hits, list] of byValue(RangeList6.over(f.v6.words, f.v6.value), () => new RangeList6())) {
      if (list.length === 0) continue;
      layers6.push(layers.push({ feed, hits }) - 1);
      lists6.push(list);
    }
  });
  const ranks = new Ranks6(lists6);
  const parts6 = ranks.lists.map((l, i) => union(l, sets.intern([layers6[i]])));
  return { ranks, byRank: relabel(overlayAll(parts6, sets.union), labeller(rules, layers, sets, labels)), layers: layers6.length };
}

/**
 * The two IPv4 slices as one table: the bucket index, the entries' count
 * and how to write them (key << 16 | label, labels renumbered by `rank` on
 * the way; past 16 bits of labels: key << 16, labels apart), straight into
 * the file's bytes (a table of their own first cost its page faults and a
 * copy), and the merged ranges (one across the split is one).
 */
function joinV4(
  low: SliceOutput,
  lowIds: readonly number[],
  high: SliceOutput,
  highIds: readonly number[],
  rank: ArrayLike<number>,
  mid: number,
) {
  const pack = (slice: Slice4, ids: readonly number[], at: number, entries: Uint32Array, labels4: Uint32Array | null) => {
    const map = Uint32Array.from(ids, (id) => rank[id]);
    const { keys, labels: local } = slice;
    if (labels4 === null) for (let i = 0; i < keys.length; i++) entries[at + i] = ((keys[i] << 16) | map[local[i]]) >>> 0;
    else {
      for (let i = 0; i < keys.length; i++) {
        entries[at + i] = (keys[i] << 16) >>> 0;
        labels4[at + i] = map[local[i]];
      }
    }
  };
  const fill = (entries: Uint32Array, labels4: Uint32Array | null) => {
    pack(low.slice, lowIds, 0, entries, labels4);
    pack(high.slice, highIds, low.slice.keys.length, entries, labels4);
  };
  const index = new Uint32Array(BUCKETS + 1);
  index.set(low.slice.index.subarray(0, mid));
  copyShifted(high.slice.index, index, mid, low.slice.keys.length);
  // A range across the split is one merged range, written as two pieces (the split is a bucket edge).
  const t = low.slice.tail;
  const h = high.slice.head;
  const across =
    t !== null && h !== null && t.at === mid * 4096 - 1 && h.at === mid * 4096 && rank[lowIds[t.label]] === rank[highIds[h.label]];
  return {
    index,
    count: low.slice.keys.length + high.slice.keys.length,
    fill,
    ranges: low.slice.ranges + high.slice.ranges - (across ? 1 : 0),
  };
}
