import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RangeList, union } from '../../../../src/compile/feeds/ranges.js';
import { seed } from '../../../helpers/env.js';
import { equal } from '../../../helpers/check.js';

/** The union the obvious way: every address sorted, duplicates dropped, runs of consecutive ones joined. */
function reference(addresses: readonly number[]): [number, number][] {
  const sorted = [...new Set(addresses)].sort((a, b) => a - b);
  const out: [number, number][] = [];
  for (const a of sorted) {
    const last = out[out.length - 1];
    if (last !== undefined && last[1] + 1 === a) last[1] = a;
    else out.push([a, a]);
  }
  return out;
}

describe('union of a large list of single addresses', () => {
  it('sorts and joins them as the obvious way does, in place or not (the bucket sort of 65 536 keys or more)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 0xffffffff }),
        fc.integer({ min: 65_000, max: 140_000 }),
        fc.constantFrom(0, 8, 16, 28),
        fc.boolean(),
        (s, n, spread, inPlace) => {
          // Addresses from a seeded xorshift, some repeated and some in runs; `spread` narrows them to few buckets.
          let x = s >>> 0 || 1;
          const next = () => {
            x ^= x << 13;
            x >>>= 0;
            x ^= x >>> 17;
            x ^= x << 5;
            return (x >>>= 0);
          };
          const addresses: number[] = [];
          for (let i = 0; i < n; i++) {
            const a = spread === 0 ? next() : (0x0a000000 + (next() >>> spread)) >>> 0;
            addresses.push(a);
            if (i % 7 === 0) addresses.push(a);
            if (i % 11 === 0 && a < 0xffffffff) addresses.push(a + 1);
          }
          const list = new RangeList(16);
          for (const a of addresses) list.push(a, a, 3);
          const u = union(list, 3, inPlace);
          const got = Array.from({ length: u.length }, (_, i) => [u.start[i], u.end[i]]);
          equal(got, reference(addresses));
          expect(Array.from(u.value.subarray(0, u.length)).every((v) => v === 3)).toBe(true);
        },
      ),
      { seed: seed(), numRuns: 12 },
    );
  });
});
