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
  if (n === null || Math.fround(n) !== n) return n;
  let short = shortest.get(n);
  if (short === undefined) {
    short = shortestFloat32(n);
    if (shortest.size >= 262_144) shortest.clear();
    shortest.set(n, short);
  }
  return short;
}

/** Coordinates already worked out: a record decoded again (after a record cache was emptied) has the same ones. */
const shortest = new Map<number, number>();

function shortestFloat32(n: number): number {
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
