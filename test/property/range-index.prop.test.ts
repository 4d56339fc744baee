/**
 * A family's index (`rangeIndex`, as many blocks as ranges up to 2^20, or
 * a packed file's compact one, a block per 16) and the lookups over it (`Dataset.find4`, `find6`) against a linear scan: for
 * any number of ranges (1 and up: an index of 2 blocks and up), every
 * address answers the last range starting at or before it, at range edges
 * and at random.
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compactIndexBits, Dataset, indexBits, rangeIndex } from '../../src/dataset/format.js';
import { seed } from '../helpers/env.js';

const params = { seed: seed(), numRuns: 300 };

/** The lookup fields of a dataset whose ranges start at `starts` (the first 0), range i's ref being i. */
function family(starts: readonly number[], bits: number) {
  const sorted = new Uint32Array(starts);
  return {
    shift4: 32 - bits,
    index4: rangeIndex(sorted.length, bits, (i) => sorted[i]),
    starts4: sorted,
    refs4: Uint32Array.from(sorted, (_, i) => i),
  };
}

/** Starts of 1 to 3 000 ranges: 0, then distinct addresses, some packed into one block, in order. */
const starts = fc
  .tuple(
    fc.uniqueArray(fc.integer({ min: 1, max: 0xffffffff }), { maxLength: 3000 }),
    fc.integer({ min: 0, max: 0xffffffff }),
    fc.uniqueArray(fc.integer({ min: 0, max: 4095 }), { maxLength: 200 }),
  )
  .map(([spread, base, near]) => [...new Set([0, ...spread, ...near.map((d) => (base + d) >>> 0)])].sort((a, b) => a - b));

const scan = (s: readonly number[], ip: number) => {
  let r = 0;
  while (r + 1 < s.length && s[r + 1] <= ip) r++;
  return r;
};

describe('the dataset index', () => {
  it('has a block per range, rounded up to a power of two, from 2 to 2^20 blocks', () => {
    expect([1, 2, 3, 4, 5, 1000, 1 << 20, (1 << 20) + 1, 9e6].map(indexBits)).toEqual([1, 1, 2, 2, 3, 10, 20, 20, 20]);
    expect([1, 16, 17, 1000, 722_015, 1 << 24, 9e7].map(compactIndexBits)).toEqual([1, 1, 1, 6, 16, 20, 20]);
  });

  /** Either rule's bits for this many ranges. */
  const bitsFor = (n: number, compact: boolean) => (compact ? compactIndexBits(n) : indexBits(n));

  it('IPv4: every address answers the last range starting at or before it', () => {
    fc.assert(
      fc.property(starts, fc.array(fc.integer({ min: 0, max: 0xffffffff }), { maxLength: 50 }), fc.boolean(), (s, probes, compact) => {
        const f = family(s, bitsFor(s.length, compact));
        expect(f.index4.length).toBe((1 << bitsFor(s.length, compact)) + 1);
        const edges = s.flatMap((a) => [a, a - 1, a + 1]).filter((a) => a >= 0 && a <= 0xffffffff);
        for (const ip of [...edges, ...probes, 0xffffffff]) expect(Dataset.prototype.find4.call(f, ip), `${ip}`).toBe(scan(s, ip));
      }),
      params,
    );
  });

  it('IPv6: the same by the first word (the rest zero), through the IPv6 index', () => {
    fc.assert(
      fc.property(starts, fc.array(fc.integer({ min: 0, max: 0xffffffff }), { maxLength: 50 }), fc.boolean(), (s, probes, compact) => {
        const bits = bitsFor(s.length, compact);
        const v6 = {
          shift6: 32 - bits,
          index6: rangeIndex(s.length, bits, (i) => s[i]),
          starts6: new Uint32Array(s.flatMap((a) => [a, 0, 0, 0])),
          refs6: Uint32Array.from(s, (_, i) => i),
        };
        for (const ip of [...s, ...probes]) expect(Dataset.prototype.find6.call(v6, [ip, 0xffffffff, 0, 1]), `${ip}`).toBe(scan(s, ip));
      }),
      params,
    );
  });
});
