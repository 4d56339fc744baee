/**
 * Steps 2 and 3 of the feed compiler (`compile.ts`): layers laid over one
 * another into sets, and each distinct set made a label (except, origins
 * counted once, flags, evidence, hit count, blocklists).
 */

import { CATEGORIES, categoryFlag, type Category } from '../../contract/template.js';
import { overlay, RangeList } from './ranges.js';

export interface Layer {
  readonly feed: number;
  readonly hits: number;
}

/** What labelling needs of a feed. */
export interface Rules {
  readonly categories: readonly Category[];
  readonly except: readonly Category[];
  readonly origins: readonly number[];
  readonly blocklist: number;
}

/** Sets of layers, interned: 0 is the empty set. */
export class LayerSets {
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
export function overlayAll(parts: RangeList[], both: (a: number, b: number) => number): RangeList {
  const queue = [...parts];
  if (queue.length === 0) return new RangeList(16);
  while (queue.length > 1) {
    queue.sort((a, b) => a.length - b.length);
    const [a, b] = queue.splice(0, 2);
    queue.push(overlay(a, b, both));
  }
  return queue[0];
}

/** What a label says. */
export interface LabelContent {
  readonly flags: number;
  readonly counts: readonly number[];
  readonly hits: number;
  readonly blocklists: readonly number[];
}

/** Labels, interned by content; label 0 is "no feed". */
export class Labels {
  private readonly keys: string[] = [];
  private readonly parts: LabelContent[] = [];
  private readonly ids = new Map<string, number>();

  constructor() {
    this.add(0, [0, 0, 0, 0, 0, 0, 0, 0], 0, []);
  }

  /** The labels' contents, by number (0 first). */
  contents(): readonly LabelContent[] {
    return this.parts;
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
      words.push(
        flags,
        refs.length,
        blocklists.length,
        hits,
        c[0] | (c[1] << 8) | (c[2] << 16) | (c[3] << 24),
        c[4] | (c[5] << 8) | (c[6] << 16) | (c[7] << 24),
      );
      refs.push(...blocklists);
    });
    return { labels: Uint32Array.from(words, (w) => w >>> 0), refs: Uint32Array.from(refs), rank };
  }
}

/** The label of each layer set: `except` applied, then flags, counts, hits and blocklists. */
export function labeller(feeds: readonly Rules[], layers: readonly Layer[], sets: LayerSets, labels: Labels): (set: number) => number {
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
    for (const unit of evidence(kept, feeds)) {
      let categories = 0;
      for (const f of unit) for (const c of feeds[f].categories) categories |= categoryFlag(c);
      CATEGORIES.forEach((c, i) => {
        if (categories & categoryFlag(c)) counts[i]++;
      });
      flags |= categories;
    }
    for (const f of kept) if (feeds[f].blocklist >= 0) bls.add(feeds[f].blocklist);
    // Hits count only while a listing feed is kept.
    id =
      kept.length === 0
        ? 0
        : labels.add(
            flags,
            counts,
            hits,
            [...bls].sort((a, b) => a - b),
          );
    memo[set] = id;
    return id;
  };
}

/** Feeds listing an address as pieces of evidence: feeds joined where they share an origin, directly or through another. */
export function evidence(listing: readonly number[], feeds: readonly Pick<Rules, 'origins'>[]): number[][] {
  const units: { feeds: number[]; origins: Set<number> }[] = [];
  for (const f of listing) {
    const joined = { feeds: [f], origins: new Set(feeds[f].origins) };
    for (let u = units.length - 1; u >= 0; u--) {
      if ([...units[u].origins].some((o) => joined.origins.has(o))) {
        joined.feeds.push(...units[u].feeds);
        for (const o of units[u].origins) joined.origins.add(o);
        units.splice(u, 1);
      }
    }
    units.push(joined);
  }
  return units.map((u) => u.feeds);
}

/** Turns a partition of layer sets into a partition of labels: label 0 left out, equal neighbours joined. */
export function relabel(part: RangeList, labelOf: (set: number) => number): RangeList {
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
