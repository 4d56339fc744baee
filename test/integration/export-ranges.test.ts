/**
 * The ranges every export writes (`src/export/ranges.ts`): each lies in one
 * network of its route's prefix length, so the record computed at its first
 * address (route included) is the record of each of its addresses. Checked
 * for every range by arithmetic, and by `lookup()` at the first and last
 * address of every range split for its route and of a seeded sample of the
 * others: on the fixtures' data (both families, every range looked up) and
 * on the default data's IPv4 (3.8 million ranges). The default data's IPv6
 * ranges (4.5 million, three times as long to walk) are walked in CI by
 * `test/engines/exports.ts --sample`, its MMDB export's networks in order,
 * and whole by `npm run check:exports`.
 */

import { describe, expect, it } from 'vitest';
import { open, openSync, type Engine } from '../../src/index.js';
import { exportRanges } from '../../src/export/ranges.js';
import { formatIp } from '../../src/ip/format.js';
import { fromBigInt } from '../../src/ip/ranges.js';
import type { IpVersion } from '../../src/ip/parse.js';
import { NO_ROUTE } from '../../src/dataset/format.js';
import { seed, xorshift32 } from '../helpers/env.js';
import { SMALL } from '../helpers/maxmind.js';
import { compiledDataset } from '../../src/engine/inside.js';

/** Walks the export ranges of an engine's dataset (of one family or both), looking up one range in `every` and each one split for its route. */
function walk(engine: Engine, every: number, family?: IpVersion) {
  const next = xorshift32(seed());
  const route = (version: IpVersion, n: bigint) => engine.lookup(formatIp(version, fromBigInt(version, n))).asn?.route ?? null;
  let ranges = 0;
  let split = 0;
  let looked = 0;
  const across: string[] = [];
  const differ: string[] = [];
  let previous: { ref: number; last: bigint } | null = null;
  for (const r of exportRanges(compiledDataset(engine), family)) {
    ranges++;
    const prefix = r.ref & 255;
    const bits = BigInt((r.version === 4 ? 32 : 128) - prefix);
    if (prefix !== NO_ROUTE && prefix !== 0 && r.first >> bits !== r.last >> bits)
      across.push(formatIp(r.version, fromBigInt(r.version, r.first)));
    // A piece that continues the one before with the same ref: its range was split for its route.
    const cut = previous !== null && previous.ref === r.ref && previous.last + 1n === r.first;
    if (cut) split++;
    previous = r;
    if (cut || next() % every === 0) {
      looked++;
      if (route(r.version, r.last) !== route(r.version, r.first)) differ.push(formatIp(r.version, fromBigInt(r.version, r.first)));
    }
  }
  return { ranges, split, looked, across: across.slice(0, 10), differ: differ.slice(0, 10) };
}

describe('export ranges', () => {
  it("of the fixtures' data, both families: each lies in one network of its route, and lookup() answers one route at both ends of each", async () => {
    const engine = await open(SMALL);
    const w = walk(engine, 1);
    engine.close();
    expect({ across: w.across, differ: w.differ, looked: w.looked }).toEqual({ across: [], differ: [], looked: w.ranges });
    expect(w.split).toBeGreaterThan(0);
  });

  it("of the default data's IPv4: each lies in one network of its route, and lookup() answers one route at both ends", () => {
    const engine = openSync();
    const w = walk(engine, 500, 4);
    engine.close();
    console.log(
      `export ranges: ${w.ranges} of the default data's IPv4, ${w.split} pieces of ranges split for their route; lookup() at both ends of ${w.looked}`,
    );
    expect({ across: w.across, differ: w.differ }).toEqual({ across: [], differ: [] });
    expect(w.split).toBeGreaterThan(0);
  }, 120_000);
});
