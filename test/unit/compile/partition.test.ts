import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NONE, overlay, Ranges } from '../../../src/compile/partition.js';
import { seed } from '../../helpers/env.js';

/** A layer: sorted, non-overlapping ranges within 0..last, drawn as cut points and values. */
const layer = (last: number) =>
  fc
    .array(fc.tuple(fc.integer({ min: 0, max: last }), fc.integer({ min: 0, max: last }), fc.integer({ min: 0, max: 3 })), { maxLength: 8 })
    .map((cuts) => {
      const ranges: [number, number, number][] = [];
      let from = 0;
      for (const [a, b, v] of cuts.map(([a, b, v]) => [Math.min(a, b), Math.max(a, b), v] as const).sort((x, y) => x[0] - y[0])) {
        if (a < from) continue;
        ranges.push([a, b, v]);
        from = b + 1;
      }
      return ranges;
    });

const w = (x: number) => [0, 0, 0, x];

describe('overlay of layers', () => {
  it('is the partition a scan of every address gives: a range wherever the tuple of values changes', () => {
    const last = 300;
    fc.assert(
      fc.property(fc.array(layer(last), { minLength: 1, maxLength: 4 }), (layers) => {
        const tables = layers.map((l) => {
          const r = new Ranges();
          for (const [a, b, v] of l) r.push(w(a), w(b), v);
          return r;
        });
        const got = overlay(tables, w(last));
        // The reference: each address's tuple, runs of equal tuples.
        const tupleAt = (x: number) => layers.map((l) => l.find(([a, b]) => x >= a && x <= b)?.[2] ?? NONE);
        const runs: { start: number; tuple: number[] }[] = [];
        for (let x = 0; x <= last; x++) {
          const t = tupleAt(x);
          const prev = runs.at(-1);
          // Adjacent ranges of one layer with equal values are one range (Ranges merges them).
          if (prev === undefined || prev.tuple.join() !== t.join()) runs.push({ start: x, tuple: t });
        }
        const mine = Array.from({ length: got.length }, (_, i) => ({ start: got.starts[i * 4 + 3], tuple: got.values.map((v) => v[i]) }));
        expect(mine).toEqual(runs);
      }),
      { seed: seed(), numRuns: 500 },
    );
  });

  it('handles the whole IPv6 space: a range ending at the last address', () => {
    const r = new Ranges();
    const top = 0xffffffff;
    r.pushNetwork([0x20010db8, 0, 0, 0], 32, 128, 1);
    r.pushNetwork([top, top, top, 0], 96, 128, 2);
    const got = overlay([r], [top, top, top, top]);
    expect(got.length).toBe(4);
    expect(Array.from(got.values[0])).toEqual([NONE, 1, NONE, 2]);
    expect(Array.from(got.starts.subarray(4, 8))).toEqual([0x20010db8, 0, 0, 0]);
    expect(Array.from(got.starts.subarray(8, 12))).toEqual([0x20010db9, 0, 0, 0]);
  });
});
