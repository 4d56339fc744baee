/**
 * Addresses to read an export back at: each range's first, a random and
 * its last address (from a CSV export of the engine's data), IPv4 also in
 * the IPv6 forms iprecord answers as IPv4 (`::ffff:`, `::a.b.c.d`,
 * `64:ff9b::`). The random one is drawn with the run's seed (FC_SEED).
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Engine } from '../../src/engine/engine.js';
import { exportDataset } from '../../src/export/index.js';
import { parseIp } from '../../src/ip/address.js';
import { formatIp } from '../../src/ip/format.js';
import { fromBigInt, toBigInt } from '../../src/ip/ranges.js';
import { splitCsvLine } from '../../src/text/csv.js';
import { seed, xorshift32 } from './env.js';

/** The addresses of every range of the engine's data; its CSV export is written into `dir` on the way. */
export async function rangeAddresses(engine: Engine, dir: string): Promise<string[]> {
  const csv = join(dir, 'ranges.csv');
  await exportDataset(engine, { format: 'csv', out: csv, fields: ['asn.asn'] });
  const next = xorshift32(seed());
  const ips: string[] = [];
  for (const line of readFileSync(csv, 'utf8').trim().split('\n').slice(1)) {
    const [, start, end] = splitCsvLine(line)!;
    const first = parseIp(start)!;
    const lo = toBigInt(first);
    const hi = toBigInt(parseIp(end)!);
    for (const n of [lo, lo + ((BigInt(next()) * (hi - lo + 1n)) >> 32n), hi]) {
      const ip = formatIp(first.version, fromBigInt(first.version, n));
      ips.push(ip);
      if (first.version === 4) ips.push(`::ffff:${ip}`, `::${ip}`, `64:ff9b::${ip}`);
    }
  }
  return ips;
}
