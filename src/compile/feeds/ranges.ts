/**
 * Address ranges in typed arrays, for compiling millions of feed entries:
 * growable lists, a radix sort, the union of one list, and the overlay of
 * two labelled partitions. Coordinates are uint32: IPv4 addresses as they
 * are, IPv6 addresses by rank (`ranges6.ts`), so one implementation serves
 * both families. Ends are inclusive, so 255.255.255.255 needs no 33rd bit.
 *
 * Over 300 lines: the list and the sort, union and overlay that work on its arrays in place are one piece.
 */

import type { RangeList6 } from './ranges6.js';

/** A growable list of inclusive ranges `[start, end]` with a value each. */
export class RangeList {
  start: Uint32Array;
  end: Uint32Array;
  value: Uint32Array;
  length = 0;

  /** `ends` and `values` false: those arrays are left empty (for a sort's scratch list). */
  constructor(capacity = 1024, ends = true, values = true) {
    this.start = new Uint32Array(capacity);
    this.end = new Uint32Array(ends ? capacity : 0);
    this.value = new Uint32Array(values ? capacity : 0);
  }

  push(start: number, end: number, value: number): void {
    if (this.length === this.start.length) this.grow(this.length * 2);
    const n = this.length++;
    this.start[n] = start;
    this.end[n] = end;
    this.value[n] = value;
  }

  /** Appends range `i` of another list. */
  pushFrom(from: RangeList, i: number): void {
    this.push(from.start[i], from.end[i], from.value[i]);
  }

  /** Appends a range, extending the last one instead when it touches it with the same value. */
  append(start: number, end: number, value: number): void {
    const n = this.length - 1;
    if (n >= 0 && this.value[n] === value && this.end[n] + 1 === start) this.end[n] = end;
    else this.push(start, end, value);
  }

  private grow(capacity: number): void {
    const s = new Uint32Array(capacity);
    s.set(this.start.subarray(0, this.length));
    this.start = s;
    const e = new Uint32Array(capacity);
    e.set(this.end.subarray(0, this.length));
    this.end = e;
    const v = new Uint32Array(capacity);
    v.set(this.value.subarray(0, this.length));
    this.value = v;
  }
}

/** Whether the ranges are in order of their starts already (most published lists are). */
function sorted(list: RangeList): boolean {
  const s = list.start;
  for (let i = 1; i < list.length; i++) if (s[i] < s[i - 1]) return false;
  return true;
}

/** Whether every range is one address. */
function singles(list: RangeList): boolean {
  const { start, end } = list;
  for (let i = 0; i < list.length; i++) if (start[i] !== end[i]) return false;
  return true;
}

/** Whether every range has the same value. */
function uniform(list: RangeList): boolean {
  const v = list.value;
  for (let i = 1; i < list.length; i++) if (v[i] !== v[0]) return false;
  return true;
}

/**
 * The ranges in order of their starts: a least-significant-digit radix
 * sort in three passes (11, 11 and 10 bits: a pass of 16 bits scatters
 * into 65 536 places at once, beyond the caches, and took longer than two
 * of 11), carrying ends and values; a large list of single addresses with
 * one value (where ends and values tell nothing) by `sortKeys`. `inPlace`:
 * the answer is written over `list` itself.
 */
function sortByStart(list: RangeList, inPlace: boolean): RangeList {
  if (sorted(list)) return list;
  const n = list.length;
  const ends = !singles(list);
  const values = !uniform(list);
  if (!ends && !values && n >= MSD_MIN) {
    const out = inPlace ? list : new RangeList(n);
    sortKeys(list.start, n, out.start);
    out.end.set(out.start.subarray(0, n));
    if (!inPlace) out.value.fill(list.value[0], 0, n);
    out.length = n;
    return out;
  }
  const c0 = new Uint32Array(2048);
  const c1 = new Uint32Array(2048);
  const c2 = new Uint32Array(1024);
  const s = list.start;
  for (let i = 0; i < n; i++) {
    const k = s[i];
    c0[k & 0x7ff]++;
    c1[(k >>> 11) & 0x7ff]++;
    c2[k >>> 22]++;
  }
  const tmp = new RangeList(n, ends, values);
  // Each pass reads what the one before wrote, so the second may write over the first one's input.
  const out = inPlace ? list : new RangeList(n);
  scatter(list, n, tmp, c0, 0, ends, values);
  scatter(tmp, n, out, c1, 11, ends, values);
  scatter(out, n, tmp, c2, 22, ends, values);
  out.start.set(tmp.start.subarray(0, n));
  out.end.set((ends ? tmp.end : tmp.start).subarray(0, n));
  if (values) out.value.set(tmp.value.subarray(0, n));
  else if (n > 0 && !inPlace) out.value.fill(list.value[0], 0, n);
  out.length = n;
  return out;
}

/** Below this many keys, the three passes cost less than `sortKeys`'s buckets. */
const MSD_MIN = 1 << 16;

/**
 * Sorts the first `n` keys of `keys` into `out` (which may be `keys`): a
 * pass on the top 10 bits puts each key in its bucket (1 024 places to
 * write at once), then each bucket is sorted on its lower 22 bits in two
 * passes of 11 in a small buffer, which the caches hold: 6 million random
 * keys in 180 ms against 220-280 ms in three passes over all of them.
 */
function sortKeys(keys: Uint32Array, n: number, out: Uint32Array): void {
  const buckets = new Uint32Array(1025);
  for (let i = 0; i < n; i++) buckets[(keys[i] >>> 22) + 1]++;
  for (let d = 0; d < 1024; d++) buckets[d + 1] += buckets[d];
  const at = buckets.slice(0, 1024);
  const all = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const k = keys[i];
    all[at[k >>> 22]++] = k;
  }
  let most = 0;
  for (let d = 0; d < 1024; d++) most = Math.max(most, buckets[d + 1] - buckets[d]);
  const small = new Uint32Array(most);
  const low = new Uint32Array(2048);
  const high = new Uint32Array(2048);
  for (let d = 0; d < 1024; d++) {
    const lo = buckets[d];
    const hi = buckets[d + 1];
    low.fill(0);
    high.fill(0);
    for (let i = lo; i < hi; i++) {
      const k = all[i];
      low[k & 0x7ff]++;
      high[(k >>> 11) & 0x7ff]++;
    }
    let a = 0;
    let b = lo;
    for (let q = 0; q < 2048; q++) {
      const x = low[q];
      low[q] = a;
      a += x;
      const y = high[q];
      high[q] = b;
      b += y;
    }
    for (let i = lo; i < hi; i++) {
      const k = all[i];
      small[low[k & 0x7ff]++] = k;
    }
    for (let i = 0; i < hi - lo; i++) {
      const k = small[i];
      out[high[(k >>> 11) & 0x7ff]++] = k;
    }
  }
}

function scatter(from: RangeList, n: number, to: RangeList, count: Uint32Array, shift: number, ends: boolean, values: boolean): void {
  // A digit's places: `count` has one per value of the digit (a power of two).
  const mask = count.length - 1;
  let sum = 0;
  for (let d = 0; d < count.length; d++) {
    const c = count[d];
    count[d] = sum;
    sum += c;
  }
  const { start, end, value } = from;
  const ts = to.start;
  const te = to.end;
  const tv = to.value;
  if (!ends && !values) {
    for (let i = 0; i < n; i++) {
      const k = start[i];
      ts[count[(k >>> shift) & mask]++] = k;
    }
    return;
  }
  for (let i = 0; i < n; i++) {
    const k = start[i];
    const at = count[(k >>> shift) & mask]++;
    ts[at] = k;
    if (ends) te[at] = end[i];
    if (values) tv[at] = value[i];
  }
}

/**
 * The union of a list's ranges (values ignored): sorted, disjoint, and
 * touching ranges joined, each with `value`. `consume`: the list is not
 * used again, and its arrays hold the answer (a list of millions of
 * addresses sorted and joined where it is, not in two new lists of its
 * size, whose pages alone took 20 ms each).
 */
export function union(list: RangeList, value: number, consume = false): RangeList {
  const l = sortByStart(list, consume);
  const n = l.length;
  // Written in place, the k-th range is written after the k-th and later ones are read.
  const out = consume ? l : new RangeList(Math.max(16, n));
  if (n === 0) return out;
  const { start, end } = l;
  const os = out.start;
  const oe = out.end;
  let k = 0;
  let cs = start[0];
  let ce = end[0];
  for (let i = 1; i < n; i++) {
    const s = start[i];
    if (s > ce + 1) {
      os[k] = cs;
      oe[k++] = ce;
      cs = s;
      ce = end[i];
    } else if (end[i] > ce) ce = end[i];
  }
  os[k] = cs;
  oe[k++] = ce;
  out.value.fill(value, 0, k);
  out.length = k;
  return out;
}

/** Addresses a sorted disjoint list covers (exact: at most 2^32). */
export function span(list: { readonly start: Uint32Array; readonly end: Uint32Array; readonly length: number }): number {
  let total = 0;
  for (let i = 0; i < list.length; i++) total += list.end[i] - list.start[i] + 1;
  return total;
}

/**
 * Lays two partitions (sorted, disjoint ranges with a value each) over one
 * another: where both have a range the value is `both(a, b)`, elsewhere
 * the one that is there. Touching pieces with equal values are joined.
 */
export function overlay(a: RangeList, b: RangeList, both: (a: number, b: number) => number): RangeList {
  const na = a.length;
  const nb = b.length;
  // Each step emits at most one piece per range it finishes, plus one: at most 2 (na + nb) pieces.
  const out = new RangeList(Math.max(16, 2 * (na + nb)));
  // The last `both` answer, reused while the same two values meet.
  let lastA = -1;
  let lastB = -1;
  let lastBoth = 0;
  let i = 0;
  let j = 0;
  // Start of what is left of the current range on each side (a range is consumed from the left).
  let as = na > 0 ? a.start[0] : 0;
  let bs = nb > 0 ? b.start[0] : 0;
  while (i < na && j < nb) {
    const ae = a.end[i];
    const be = b.end[j];
    if (ae < bs) {
      out.append(as, ae, a.value[i]);
      if (++i < na) as = a.start[i];
    } else if (be < as) {
      out.append(bs, be, b.value[j]);
      if (++j < nb) bs = b.start[j];
    } else {
      // They overlap: first the part before the later start, then the common part.
      if (as < bs) {
        out.append(as, bs - 1, a.value[i]);
        as = bs;
      } else if (bs < as) {
        out.append(bs, as - 1, b.value[j]);
        bs = as;
      }
      const end = ae < be ? ae : be;
      const va = a.value[i];
      const vb = b.value[j];
      if (va !== lastA || vb !== lastB) {
        lastA = va;
        lastB = vb;
        lastBoth = both(va, vb);
      }
      out.append(as, end, lastBoth);
      if (ae === end) {
        if (++i < na) as = a.start[i];
      } else as = end + 1;
      if (be === end) {
        if (++j < nb) bs = b.start[j];
      } else bs = end + 1;
    }
  }
  for (; i < na; i++, as = i < na ? a.start[i] : 0) out.append(as, a.end[i], a.value[i]);
  for (; j < nb; j++, bs = j < nb ? b.start[j] : 0) out.append(bs, b.end[j], b.value[j]);
  return out;
}

/** A list split by value (hit count): one list per distinct value (the list itself when it has one). */
export function byValue<T extends RangeList | RangeList6>(list: T, make: () => T): Map<number, T> {
  const v = list.value;
  let one = true;
  for (let i = 1; i < list.length && one; i++) one = v[i] === v[0];
  if (one) return new Map([[list.length > 0 ? v[0] : 1, list]]);
  const out = new Map<number, T>();
  for (let i = 0; i < list.length; i++) {
    let to = out.get(v[i]);
    if (to === undefined) out.set(v[i], (to = make()));
    (to as RangeList & RangeList6).pushFrom(list as RangeList & RangeList6, i);
  }
  return out;
}
