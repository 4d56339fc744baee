/**
 * IPv6 ranges for the feed compiler: lists of 128-bit ranges (four words
 * each), and their ranks, which map every IPv6 boundary to a uint32 so
 * that the IPv4 machinery of `ranges.ts` serves IPv6 too.
 */

import { RangeList } from './ranges.js';

/** IPv6 ranges: four words for the start and four for the end, per range. */
export class RangeList6 {
  words: Uint32Array;
  value: Uint32Array;
  length = 0;

  constructor(capacity = 64) {
    this.words = new Uint32Array(capacity * 8);
    this.value = new Uint32Array(capacity);
  }

  /** A list over existing arrays (eight words and one value per range), not copied. */
  static over(words: Uint32Array, value: Uint32Array): RangeList6 {
    const l = new RangeList6(0);
    l.words = words;
    l.value = value;
    l.length = value.length;
    return l;
  }

  /** Appends range `i` of another list. */
  pushFrom(from: RangeList6, i: number): void {
    this.push(from.words.subarray(i * 8, i * 8 + 4), from.words.subarray(i * 8 + 4, i * 8 + 8), from.value[i]);
  }

  push(start: ArrayLike<number>, end: ArrayLike<number>, value: number): void {
    if (this.length === this.value.length) {
      const w = new Uint32Array(this.words.length * 2);
      w.set(this.words);
      this.words = w;
      const v = new Uint32Array(this.value.length * 2);
      v.set(this.value);
      this.value = v;
    }
    const at = this.length * 8;
    for (let k = 0; k < 4; k++) {
      this.words[at + k] = start[k];
      this.words[at + 4 + k] = end[k];
    }
    this.value[this.length++] = value;
  }
}

/**
 * IPv6 boundaries in order, so that IPv6 ranges become ranges of ranks:
 * every start and every end + 1 of the lists is a boundary, and a range
 * `[s, e]` becomes `[rank(s), rank(e + 1) - 1]` (an end at the last address,
 * with no end + 1, becomes the last rank). `lists` are the lists in rank
 * form; `start(r)` and `end(r)` map a rank range back to addresses.
 */
export class Ranks6 {
  /** Distinct boundaries in order, four words each. */
  private readonly bounds: Uint32Array;
  readonly count: number;
  readonly lists: RangeList[];

  constructor(input: readonly RangeList6[]) {
    let total = 0;
    for (const l of input) total += l.length;
    // Keys: for range g, its start at 2g and its end + 1 at 2g + 1 (absent past the last address).
    const keys = new Uint32Array(total * 8);
    const present = new Uint8Array(total * 2);
    let g = 0;
    for (const l of input) {
      const w = l.words;
      for (let i = 0; i < l.length; i++, g++) {
        const at = i * 8;
        const k = g * 8;
        keys[k] = w[at];
        keys[k + 1] = w[at + 1];
        keys[k + 2] = w[at + 2];
        keys[k + 3] = w[at + 3];
        present[2 * g] = 1;
        present[2 * g + 1] = increment(w, at + 4, keys, k + 4) ? 1 : 0;
      }
    }
    let order: Uint32Array = new Uint32Array(total * 2);
    let n = 0;
    for (let k = 0; k < total * 2; k++) if (present[k] === 1) order[n++] = k;
    order = radixSortKeys(keys, order.subarray(0, n));
    const rank = new Uint32Array(total * 2);
    const bounds = new Uint32Array(n * 4);
    let r = -1;
    for (let x = 0; x < n; x++) {
      const k = order[x] * 4;
      const b = r * 4;
      if (
        r < 0 ||
        keys[k] !== bounds[b] ||
        keys[k + 1] !== bounds[b + 1] ||
        keys[k + 2] !== bounds[b + 2] ||
        keys[k + 3] !== bounds[b + 3]
      ) {
        r++;
        bounds[b + 4] = keys[k];
        bounds[b + 5] = keys[k + 1];
        bounds[b + 6] = keys[k + 2];
        bounds[b + 7] = keys[k + 3];
      }
      rank[order[x]] = r;
    }
    this.count = r + 1;
    this.bounds = bounds.subarray(0, this.count * 4);
    this.lists = [];
    g = 0;
    for (const l of input) {
      const out = new RangeList(Math.max(16, l.length));
      for (let i = 0; i < l.length; i++, g++)
        out.push(rank[2 * g], present[2 * g + 1] === 1 ? rank[2 * g + 1] - 1 : this.count - 1, l.value[i]);
      this.lists.push(out);
    }
  }

  /** Appends the addresses of ranks `first` to `last` to `out`, with `value`. */
  pushRange(out: RangeList6, first: number, last: number, value: number): void {
    const b = this.bounds;
    const s = first * 4;
    const start = this.word;
    start[0] = b[s];
    start[1] = b[s + 1];
    start[2] = b[s + 2];
    start[3] = b[s + 3];
    const end = this.word2;
    if (last + 1 >= this.count) end.fill(0xffffffff);
    else {
      // The address before the next boundary.
      const e = (last + 1) * 4;
      let borrow = 1;
      for (let k = 3; k >= 0; k--) {
        const v = b[e + k] - borrow;
        end[k] = v;
        borrow = v < 0 ? 1 : 0;
      }
    }
    out.push(start, end, value);
  }

  private readonly word = new Uint32Array(4);
  private readonly word2 = new Uint32Array(4);
}

/** Key numbers (`order`, key k at `keys[4k..4k+3]`) in order of their 128-bit keys: LSD radix, 16 bits a pass. */
function radixSortKeys(keys: Uint32Array, order: Uint32Array): Uint32Array {
  let from: Uint32Array = order;
  let to: Uint32Array = new Uint32Array(order.length);
  const count = new Uint32Array(65536);
  // Bits that differ between keys, per word: a digit where none differ needs no pass.
  const varies = [0, 0, 0, 0];
  if (order.length > 0) {
    const k0 = order[0] * 4;
    for (let x = 1; x < order.length; x++) {
      const k = order[x] * 4;
      for (let w = 0; w < 4; w++) varies[w] |= keys[k + w] ^ keys[k0 + w];
    }
  }
  for (let digit = 0; digit < 8; digit++) {
    const word = 3 - (digit >>> 1);
    const shift = (digit & 1) * 16;
    if (((varies[word] >>> shift) & 0xffff) === 0) continue;
    count.fill(0);
    for (let x = 0; x < from.length; x++) count[(keys[from[x] * 4 + word] >>> shift) & 0xffff]++;
    let sum = 0;
    for (let d = 0; d < 65536; d++) {
      const c = count[d];
      count[d] = sum;
      sum += c;
    }
    for (let x = 0; x < from.length; x++) to[count[(keys[from[x] * 4 + word] >>> shift) & 0xffff]++] = from[x];
    const t = from;
    from = to;
    to = t;
  }
  return from;
}

/** The order of the IPv6 addresses at `a[at..at+3]` and `b[bt..bt+3]`: -1, 0 or 1. */
export function compareWords(a: ArrayLike<number>, b: ArrayLike<number>, at = 0, bt = 0): number {
  for (let k = 0; k < 4; k++) if (a[at + k] !== b[bt + k]) return a[at + k] < b[bt + k] ? -1 : 1;
  return 0;
}

/** Writes the address at `w[from..from+3]` plus one at `out[at..at+3]`; false past the last address. */
function increment(w: Uint32Array, from: number, out: Uint32Array, at: number): boolean {
  let carry = 1;
  for (let k = 3; k >= 0; k--) {
    const v = w[from + k] + carry;
    out[at + k] = v;
    carry = v > 0xffffffff ? 1 : 0;
  }
  return carry === 0;
}
