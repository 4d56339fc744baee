/**
 * The benchmarks' addresses, drawn with a seeded PRNG from networks of the
 * ASN data (so that geo and ASN both hit): 80 % IPv4, 15 % IPv6, 5 %
 * IPv4-mapped IPv6.
 *
 * - `addressMix()`: 100 000 addresses (duplicates possible), the mix that
 *   the suites cycle through;
 * - `distinctAddresses(n)`: n addresses, no two alike, each to be looked up
 *   once (no cache of the reader under test can have seen them);
 * - `zipfMix(n, draws)`: `draws` lookups over n distinct addresses with
 *   Zipf weights (s = 1): a few addresses very often, most rarely, as
 *   clients of a service come back.
 */

import { readFileSync } from 'node:fs';
import { splitCsvLine } from '../src/text/csv.js';
import { fromBigInt, toBigInt } from '../src/ip/ranges.js';
import { defaultAsnSources } from '../src/data.js';
import { specialTable } from '../src/ip/special.js';
import { parseIp } from '../src/ip/address.js';
import { classify, SpecialKind } from '../src/ip/special.js';
import { formatIp } from '../src/ip/format.js';
import { prng } from '../test/helpers/env.js';

export const SEED = 42;
const MIX = 100_000;

/** A generator of addresses inside networks of the ASN data. */
function picker(seed: number): () => string {
  const rand = prng(seed);
  const ranges = defaultAsnSources().files.map((f) =>
    readFileSync(f, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [a, b] = splitCsvLine(line)!;
        return [parseIp(a)!, parseIp(b)!] as const;
      }),
  );
  const pick = (version: 4 | 6): string => {
    const list = ranges[version === 4 ? 0 : 1];
    const [a, b] = list[Math.floor(rand() * list.length)];
    const lo = toBigInt(a);
    const span = toBigInt(b) - lo + 1n;
    const off = BigInt(Math.floor(rand() * 2 ** 52)) % span;
    return formatIp(version, fromBigInt(version, lo + off));
  };
  return () => {
    const r = rand();
    return r < 0.8 ? pick(4) : r < 0.95 ? pick(6) : '::ffff:' + pick(4);
  };
}

/** Addresses inside networks of the ASN data (so geo and ASN both hit). */
export function addressMix(): string[] {
  const next = picker(SEED);
  return Array.from({ length: MIX }, next);
}

/** `n` addresses inside networks of the ASN data, no two alike, none private or reserved (each has a record). */
export function distinctAddresses(n: number, seed = SEED + 1): string[] {
  const next = picker(seed);
  const special = specialTable();
  const seen = new Set<string>();
  while (seen.size < n) {
    const ip = next();
    const a = parseIp(ip)!;
    const kind = classify(special, a.version, a.words);
    if (kind !== SpecialKind.Private && kind !== SpecialKind.Reserved) seen.add(ip);
  }
  return [...seen];
}

/** `draws` lookups over `n` distinct addresses, the k-th most frequent drawn with weight 1/k. */
export function zipfMix(n: number, draws: number, seed = SEED + 2): string[] {
  const pool = distinctAddresses(n, seed);
  const cumulative = new Float64Array(n);
  let sum = 0;
  for (let k = 0; k < n; k++) cumulative[k] = sum += 1 / (k + 1);
  const rand = prng(seed + 1);
  return Array.from({ length: draws }, () => {
    const x = rand() * sum;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cumulative[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return pool[lo];
  });
}
