/**
 * The benchmarks' addresses, drawn with a seeded PRNG from networks of the
 * ASN data (so that geo and ASN both hit): 80 % IPv4, 15 % IPv6, 5 %
 * IPv4-mapped IPv6.
 *
 * - `addressMix()`: 100 000 addresses (duplicates possible), the mix that
 *   the suites cycle through;
 * - `distinctAddresses(n)`: n addresses, no two alike, each to be looked up
 *   once (no cache of the reader under test can have seen them); of one
 *   family with a third argument;
 * - `zipfMix(n, draws)`: `draws` lookups over n distinct addresses with
 *   Zipf weights (s = 1): a few addresses very often, most rarely, as
 *   clients of a service come back.
 */

import { readFileSync } from 'node:fs';
import { splitCsvLine } from '../src/text/csv.js';
import { fromBigInt, toBigInt } from '../src/ip/ranges.js';
import { defaultAsnSources } from '../src/dataset/defaults.js';
import { specialTable } from '../src/ip/special.js';
import { parseIp } from '../src/ip/address.js';
import { classify, SpecialKind } from '../src/ip/special.js';
import { formatIp } from '../src/ip/format.js';
import { prng } from '../test/helpers/env.js';

export const SEED = 42;
const MIX = 100_000;

/** A generator of addresses inside networks of the ASN data (of one family when `only` is given). */
function picker(seed: number, only?: 4 | 6): () => string {
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
    // 52 random bits from two draws (one draw has 32: as the high bits alone they left every network of
    // 2^20 addresses or fewer only its first address, and the distinct mixes slow to make as they ran out).
    const off = (BigInt(Math.floor(rand() * 2 ** 32)) * 2n ** 20n + BigInt(Math.floor(rand() * 2 ** 20))) % span;
    return formatIp(version, fromBigInt(version, lo + off));
  };
  if (only !== undefined) return () => pick(only);
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

/** `n` addresses inside networks of the ASN data, no two alike, none private or reserved (each has a record); of one family when `only` is given. */
export function distinctAddresses(n: number, seed = SEED + 1, only?: 4 | 6): string[] {
  const next = picker(seed, only);
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

/** `n` distinct private addresses of 10.0.0.0/8 in a seeded order: what a service behind a load balancer logs. */
export function privateAddresses(n: number, seed = SEED + 3): string[] {
  const rand = prng(seed);
  const seen = new Set<string>();
  while (seen.size < n) {
    const x = Math.floor(rand() * 2 ** 24);
    seen.add(`10.${x >>> 16}.${(x >>> 8) & 255}.${x & 255}`);
  }
  return [...seen];
}

/**
 * `n` addresses as a web server's log holds them, none seen twice: 60 %
 * public IPv4 and 10 % IPv6 inside networks of the ASN data, 30 % private
 * and reserved (RFC 1918, loopback, link-local, ULA, multicast,
 * documentation), in a seeded order.
 */
export function logMix(n: number, seed = SEED + 4): string[] {
  const rand = prng(seed);
  const special = specialTable();
  const next = picker(seed + 1);
  const pub = { 4: [] as string[], 6: [] as string[] };
  // The picker draws 80 % IPv4, 15 % IPv6, 5 % IPv4-mapped: drawn until each share is full.
  const want = { 4: Math.round(n * 0.6), 6: Math.round(n * 0.1) };
  const seen = new Set<string>();
  while (pub[4].length < want[4] || pub[6].length < want[6]) {
    const ip = next();
    if (ip.startsWith('::ffff:') || seen.has(ip)) continue;
    const a = parseIp(ip)!;
    const kind = classify(special, a.version, a.words);
    if (kind === SpecialKind.Private || kind === SpecialKind.Reserved || pub[a.version].length >= want[a.version]) continue;
    seen.add(ip);
    pub[a.version].push(ip);
  }
  const byte = () => Math.floor(rand() * 256);
  const hex = () => Math.floor(rand() * 65536).toString(16);
  const privateForms = [
    () => `10.${byte()}.${byte()}.${byte()}`,
    () => `192.168.${byte()}.${byte()}`,
    () => `172.${16 + Math.floor(rand() * 16)}.${byte()}.${byte()}`,
    () => `127.0.${byte()}.${byte()}`,
    () => `fe80::${hex()}:${hex()}:${hex()}:${hex()}`,
    () => `fd${hex().padStart(2, '0').slice(0, 2)}:${hex()}::${hex()}`,
    () => `224.${byte()}.${byte()}.${byte()}`,
    () => `192.0.2.${byte()}`,
  ];
  const out = [...pub[4], ...pub[6]];
  while (out.length < n) {
    const ip = privateForms[Math.floor(rand() * privateForms.length)]();
    if (!seen.has(ip)) {
      seen.add(ip);
      out.push(ip);
    }
  }
  // A seeded shuffle: the kinds interleaved as in a log.
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}
