/** Value helpers shared by the adapters. */

import type { MmdbValue } from '../../mmdb/decoder.js';

export type Row = { readonly [key: string]: MmdbValue };

export function isRow(v: MmdbValue | null | undefined): v is Row {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);
}

/** A non-empty string, else null (databases write "" for unknown). */
export function text(v: MmdbValue | undefined): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
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
