/**
 * The benchmarks' address mix: 100 000 addresses drawn with a seeded PRNG
 * from networks of the ASN data (so that geo and ASN both hit): 80 % IPv4,
 * 15 % IPv6, 5 % IPv4-mapped IPv6.
 */

import { readFileSync } from 'node:fs';
import { splitCsvLine } from '../src/build/csv.js';
import { fromBigInt, toBigInt } from '../src/build/ranges.js';
import { defaultAsnSources } from '../src/data.js';
import { parseIp } from '../src/ip/address.js';
import { formatIp } from '../src/ip/format.js';
import { prng } from '../test/helpers/env.js';

export const SEED = 42;
const MIX = 100_000;

export /** Addresses inside networks of the ASN data (so geo and ASN both hit). */
function addressMix(): string[] {
  const rand = prng(SEED);
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
  const out: string[] = [];
  for (let i = 0; i < MIX; i++) {
    const r = rand();
    if (r < 0.8) out.push(pick(4));
    else if (r < 0.95) out.push(pick(6));
    else out.push('::ffff:' + pick(4));
  }
  return out;
}
