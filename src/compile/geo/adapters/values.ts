/** Value helpers shared by the adapters. */

import type { MmdbValue } from '../../../mmdb/decoder.js';

export type Row = { readonly [key: string]: MmdbValue };

export function isRow(v: MmdbValue | null | undefined): v is Row {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);
}

/** A non-empty string, at most MAX_TEXT_BYTES (`capped`), else null (databases write "" for unknown). */
export function text(v: MmdbValue | undefined): string | null {
  return typeof v === 'string' && v !== '' ? capped(v) : null;
}

/**
 * The longest string a source may give, in UTF-8 bytes: past it the value
 * is cut (the longest AS name of the default data is 98 bytes; a 10 MB one
 * would be written into every record of its networks).
 */
export const MAX_TEXT_BYTES = 256;

/** Strings cut by `capped` in this process: how many, and the first one's start (the compiler reports them). */
export const textCuts = { count: 0, first: '' };

/** `s` cut to at most MAX_TEXT_BYTES of UTF-8 at a character's end (counted in `textCuts`). */
export function capped(s: string): string {
  // Three bytes at most per UTF-16 unit: short strings need no count.
  if (s.length * 3 <= MAX_TEXT_BYTES || Buffer.byteLength(s) <= MAX_TEXT_BYTES) return s;
  const b = Buffer.from(s);
  let end = MAX_TEXT_BYTES;
  // Not inside a character: back off its continuation bytes (10xxxxxx) to its lead byte.
  while (end > 0 && (b[end] & 0xc0) === 0x80) end--;
  if (textCuts.count++ === 0) textCuts.first = s.slice(0, 40);
  return b.toString('utf8', 0, end);
}

/** A finite number, else null. */
export function num(v: MmdbValue | undefined): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/**
 * A coordinate as the database meant it. DB-IP stores coordinates as 32-bit
 * floats: 37.422 reads back as 37.422000885009766. The shortest decimal that
 * reads back as the same float is the value that was written.
 */
export function coordinate(v: MmdbValue | undefined): number | null {
  const n = num(v);
  return n === null || Math.fround(n) !== n ? n : shortestFloat32(n);
}

/**
 * The shortest decimal that reads back as the float32 `n`: what
 * `Number(n.toPrecision(p))` gives for the smallest such `p`. Each
 * precision is tried in integers (`n` scaled by a power of ten, rounded,
 * scaled back: a power of ten up to 1e22 is exact, so the quotient is the
 * double nearest the decimal, as parsing its text gives); a product too
 * near a tie between two decimals to be sure which way `toPrecision` rounds
 * it is settled by `toPrecision`.
 */
export function shortestFloat32(n: number): number {
  if (n === 0) return 0;
  if (!Number.isFinite(n)) return n;
  const a = Math.abs(n);
  // The decimal exponent of `a`: log10 can be off by one near powers of ten.
  let e = Math.floor(Math.log10(a));
  if (e < -13 || e > 13) return shortestByText(n);
  if (pow10(e) > a) e--;
  else if (pow10(e + 1) <= a) e++;
  for (let p = 1; p <= 9; p++) {
    const k = p - 1 - e;
    const scaled = k >= 0 ? n * POW10[k] : n / POW10[-k];
    const m = Math.round(scaled);
    if (Math.abs(Math.abs(scaled - m) - 0.5) < 1e-6) {
      const short = Number(n.toPrecision(p));
      if (Math.fround(short) === n) return short;
      continue;
    }
    const short = k >= 0 ? m / POW10[k] : m * POW10[-k];
    if (Math.fround(short) === n) return short;
  }
  return shortestByText(n);
}

/** Exact powers of ten as doubles: 1e0 to 1e22. */
const POW10 = Array.from({ length: 23 }, (_, i) => Number(`1e${i}`));

function pow10(e: number): number {
  return e >= 0 ? POW10[e] : 1 / POW10[-e];
}

/** `shortestFloat32` by the text of each precision. */
export function shortestByText(n: number): number {
  for (let p = 1; p <= 9; p++) {
    const short = Number(n.toPrecision(p));
    if (Math.fround(short) === n) return short;
  }
  return n;
}

/** English name from a MaxMind `names` map. */
export function englishName(v: MmdbValue | undefined): string | null {
  return isRow(v) && isRow(v.names) ? text(v.names.en) : null;
}

export function flag(v: MmdbValue | undefined): boolean {
  return v === true;
}
