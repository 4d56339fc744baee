/**
 * Ranges of one address family, and their overlay: the partition of the
 * whole family into maximal ranges over which every layer (a geo
 * database, an ASN database, the special-purpose registry...) has one
 * value. Addresses are four 32-bit words, most significant first (an IPv4
 * address is the last word, the others zero), kept in typed arrays.
 * Build time only.
 */

/** No value: the layer has no data there. */
export const NONE = -1;

/** Sorted, non-overlapping ranges with a value each: first and last address (four words each), value. */
export class Ranges {
  lo = new Uint32Array(1024);
  hi = new Uint32Array(1024);
  value = new Int32Array(256);
  length = 0;

  /** Appends a range after the last; one that continues the last with the same value extends it. */
  push(lo: ArrayLike<number>, hi: ArrayLike<number>, value: number): void {
    const n = this.length;
    if (n > 0 && this.value[n - 1] === value && isNext(this.hi, (n - 1) * 4, lo)) {
      copy(hi, this.hi, (n - 1) * 4);
      return;
    }
    if (n === this.value.length) this.grow();
    copy(lo, this.lo, n * 4);
    copy(hi, this.hi, n * 4);
    this.value[n] = value;
    this.length = n + 1;
  }

  /** Appends a CIDR network (first address and prefix length within a family of `bits`). */
  pushNetwork(words: ArrayLike<number>, prefix: number, bits: 32 | 128, value: number): void {
    const hi = this.last;
    const first = 128 - bits + prefix;
    for (let w = 0; w < 4; w++) {
      // The bits of word w past the prefix: ones.
      const from = first - w * 32;
      hi[w] = from <= 0 ? 0xffffffff : from < 32 ? (words[w] | (0xffffffff >>> from)) >>> 0 : words[w];
    }
    this.push(words, hi, value);
  }

  /** Scratch: the last address of a network being pushed. */
  private readonly last = new Uint32Array(4);

  private grow(): void {
    const size = this.value.length * 2;
    const lo = new Uint32Array(size * 4);
    const hi = new Uint32Array(size * 4);
    const value = new Int32Array(size);
    lo.set(this.lo);
    hi.set(this.hi);
    value.set(this.value);
    this.lo = lo;
    this.hi = hi;
    this.value = value;
  }
}

function copy(from: ArrayLike<number>, to: Uint32Array, at: number): void {
  to[at] = from[0];
  to[at + 1] = from[1];
  to[at + 2] = from[2];
  to[at + 3] = from[3];
}

function copyFrom(from: Uint32Array, at: number, to: Uint32Array): void {
  to[0] = from[at];
  to[1] = from[at + 1];
  to[2] = from[at + 2];
  to[3] = from[at + 3];
}

/** Whether `b` is the address right after the one at `a[at..at+3]`. */
function isNext(a: Uint32Array, at: number, b: ArrayLike<number>): boolean {
  let carry = 1;
  for (let w = 3; w >= 0; w--) {
    const sum = a[at + w] + carry;
    const word = sum >>> 0;
    carry = sum > 0xffffffff ? 1 : 0;
    if (word !== b[w]) return false;
  }
  return carry === 0;
}

/** Compares the address at `a[ai..]` with the one at `b[bi..]`. */
export function compare(a: Uint32Array, ai: number, b: Uint32Array, bi: number): number {
  for (let w = 0; w < 4; w++) if (a[ai + w] !== b[bi + w]) return a[ai + w] < b[bi + w] ? -1 : 1;
  return 0;
}

/** `out` := the address after the one at `a[at..]`; false when it has none (the last address of the space). */
export function next(a: Uint32Array, at: number, out: Uint32Array): boolean {
  let carry = 1;
  for (let w = 3; w >= 0; w--) {
    const sum = a[at + w] + carry;
    out[w] = sum >>> 0;
    carry = sum > 0xffffffff ? 1 : 0;
  }
  return carry === 0;
}

/** The partition of a family by several layers: each range's first address and its value in every layer. */
export interface Overlay {
  readonly starts: Uint32Array;
  /** `values[layer][range]`: the layer's value over the range, or NONE. */
  readonly values: Int32Array[];
  readonly length: number;
}

/**
 * Overlays layers over a family's space (`last`: its last address): one
 * range wherever the tuple of values changes, the first at address 0,
 * ranges where no layer has a value included.
 */
export function overlay(layers: readonly Ranges[], last: ArrayLike<number>): Overlay {
  const k = layers.length;
  // As many as the layers' ranges together: on the default data more than the overlay has, so the arrays never grow.
  let cap = Math.max(
    1024,
    layers.reduce((n, l) => n + l.length, 0),
  );
  let starts = new Uint32Array(cap * 4);
  let values = layers.map(() => new Int32Array(cap));
  let length = 0;
  const index = new Int32Array(k);
  const pos = new Uint32Array(4);
  const end = Uint32Array.from([last[0], last[1], last[2], last[3]]);
  const nextPos = new Uint32Array(4);
  const tuple = new Int32Array(k);
  const before = new Uint32Array(4);
  for (;;) {
    // The last address of the range from `pos`: the earliest place where some layer's value changes.
    nextPos.set(end);
    for (let l = 0; l < k; l++) {
      const r = layers[l];
      let i = index[l];
      while (i < r.length && compare(r.hi, i * 4, pos, 0) < 0) i++;
      index[l] = i;
      if (i < r.length && compare(r.lo, i * 4, pos, 0) <= 0) {
        tuple[l] = r.value[i];
        if (compare(r.hi, i * 4, nextPos, 0) < 0) copyFrom(r.hi, i * 4, nextPos);
      } else {
        tuple[l] = NONE;
        // Up to the address before the layer's next range.
        if (i < r.length) {
          previous(r.lo, i * 4, before);
          if (compare(before, 0, nextPos, 0) < 0) copyFrom(before, 0, nextPos);
        }
      }
    }
    // `nextPos` is now the last address of this range.
    if (length === cap) {
      cap *= 2;
      const s = new Uint32Array(cap * 4);
      s.set(starts);
      starts = s;
      values = values.map((v) => {
        const grown = new Int32Array(cap);
        grown.set(v);
        return grown;
      });
    }
    copy(pos, starts, length * 4);
    for (let l = 0; l < k; l++) values[l][length] = tuple[l];
    length++;
    if (!next(nextPos, 0, pos) || compare(pos, 0, end, 0) > 0) break;
  }
  return { starts: starts.subarray(0, length * 4), values: values.map((v) => v.subarray(0, length)), length };
}

/** `out` := the address before the one at `a[at..]` (which is not address 0). */
function previous(a: Uint32Array, at: number, out: Uint32Array): void {
  let borrow = 1;
  for (let w = 3; w >= 0; w--) {
    const d = a[at + w] - borrow;
    out[w] = d >>> 0;
    borrow = d < 0 ? 1 : 0;
  }
}
