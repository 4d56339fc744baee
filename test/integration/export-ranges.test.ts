/**
 * The ranges every export writes (`src/export/ranges.ts`), on the default
 * data: each lies in one network of its route's prefix length, so the
 * record computed at its first address (route included) is the record of
 * each of its addresses. Checked for every range by arithmetic, and by
 * `lookup()` at the first and last address of every range split for its
 * route and of a seeded sample of the others.
 */

import { describe, expect, it } from 'vitest';
import { openSync } from '../../src/index.js';
import { exportRanges } from '../../src/export/ranges.js';
import { formatIp } from '../../src/ip/format.js';
import { fromBigInt } from '../../src/ip/ranges.js';
import { NO_ROUTE } from '../../src/dataset/format.js';
import { seed, xorshift32 } from '../helpers/env.js';

describe('export ranges of the default data', () => {
  it('each lie in one network of their route, and lookup() answers one route at both ends', () => {
    const engine = openSync();
    const next = xorshift32(seed());
    const route = (version: 4 | 6, n: bigint) => engine.lookup(formatIp(version, fromBigInt(version, n))).asn?.route ?? null;
    let ranges = 0;
    let split = 0;
    let looked = 0;
    const across: string[] = [];
    const differ: string[] = [];
    let previous: { ref: number; last: bigint } | null = null;
    for (const r of exportRanges(engine.compiledDataset())) {
      ranges++;
      const prefix = r.ref & 255;
      const bits = BigInt((r.version === 4 ? 32 : 128) - prefix);
      if (prefix !== NO_ROUTE && prefix !== 0 && r.first >> bits !== r.last >> bits) across.push(formatIp(r.version, fromBigInt(r.version, r.first)));
      // A piece that continues the one before with the same ref: its range was split for its route.
      const cut = previous !== null && previous.ref === r.ref && previous.last + 1n === r.first;
      if (cut) split++;
      previous = r;
      if (cut || next() % 500 === 0) {
        looked++;
        if (route(r.version, r.last) !== route(r.version, r.first)) differ.push(formatIp(r.version, fromBigInt(r.version, r.first)));
      }
    }
    engine.close();
    console.log(`export ranges: ${ranges} of the default data, ${split} pieces of ranges split for their route; lookup() at both ends of ${looked}`);
    expect(across.slice(0, 10)).toEqual([]);
    expect(differ.slice(0, 10)).toEqual([]);
    expect(split).toBeGreaterThan(0);
  }, 120_000);
});
