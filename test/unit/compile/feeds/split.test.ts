import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitBucket } from '../../../../src/compile/feeds/compile.js';
import { BUCKETS } from '../../../../src/compile/feeds/tree-format.js';
import { seed } from '../../../helpers/env.js';

/** A layer of ranges in order of their starts (only the starts count). */
const layer = fc.uniqueArray(fc.nat({ max: 0xffffffff }), { maxLength: 300 }).map((starts) => {
  const start = Uint32Array.from(starts.sort((a, b) => a - b));
  return { hits: 0, start, end: start.slice() };
});

describe('splitBucket', () => {
  it('is the first bucket below which the share of IPv4 ranges lies, by a sort of every start', () => {
    fc.assert(
      fc.property(fc.array(layer, { maxLength: 5 }), fc.nat({ max: 200 }), (layers, ranges6) => {
        const starts = layers.flatMap((l) => [...l.start]).sort((a, b) => a - b);
        const mid = splitBucket(layers, ranges6);
        if (starts.length === 0) {
          expect(mid).toBe(BUCKETS / 2);
          return;
        }
        const target = Math.min(0.75 * starts.length, 0.5 * starts.length + 3 * ranges6);
        const below = (b: number) => starts.filter((s) => s < b * 4096).length;
        expect(mid).toBeGreaterThanOrEqual(1);
        expect(mid).toBeLessThanOrEqual(BUCKETS - 1);
        // The first such bucket (both threads get a part of the space, however the ranges lie).
        if (mid < BUCKETS - 1) expect(below(mid)).toBeGreaterThanOrEqual(target);
        if (mid > 1) expect(below(mid - 1)).toBeLessThan(target);
      }),
      { seed: seed(), numRuns: 300 },
    );
  });
});
