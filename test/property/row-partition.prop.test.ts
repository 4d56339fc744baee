/**
 * Range rows resolved into one partition (`src/compile/row-partition.ts`)
 * against two references: the splice-per-row resolution it replaced
 * (quadratic when rows nest), and a per-address scan (the latest row
 * holding an address wins it). Then rows nested with one start, which the
 * old resolution took quadratic time on, at a size it took minutes for.
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { resolveRows, type Piece } from '../../src/compile/row-partition.js';
import { seed } from '../helpers/env.js';
import { equal, same } from '../helpers/check.js';

const params = { seed: seed(), numRuns: 3000 };

/** The resolution before: each row, in start order, split into the pieces it overlaps. */
function spliceReference(rows: readonly Piece[]): Piece[] {
  const items = [...rows].sort((a, b) => (a.lo < b.lo ? -1 : a.lo > b.lo ? 1 : a.order - b.order));
  const out: Piece[] = [];
  for (const r of items) {
    let from = out.length;
    while (from > 0 && out[from - 1].hi >= r.lo) from--;
    if (from === out.length) {
      out.push(r);
      continue;
    }
    const merged: Piece[] = [];
    let at = r.lo;
    for (const p of out.splice(from)) {
      if (p.lo < r.lo) merged.push({ ...p, hi: r.lo - 1n });
      const lo = p.lo > r.lo ? p.lo : r.lo;
      const hi = p.hi < r.hi ? p.hi : r.hi;
      if (lo <= hi) {
        if (at < lo) merged.push({ ...r, lo: at, hi: lo - 1n });
        merged.push(p.order > r.order ? { ...p, lo, hi } : { ...r, lo, hi });
        at = hi + 1n;
      }
      if (p.hi > r.hi) merged.push({ ...p, lo: p.lo > r.hi ? p.lo : r.hi + 1n });
    }
    if (at <= r.hi) merged.push({ ...r, lo: at });
    merged.sort((a, b) => (a.lo < b.lo ? -1 : 1));
    out.push(...merged);
  }
  return out;
}

/** Rows over a small space, so that they nest, touch and overlap often. */
const rowsArb = fc
  .array(
    fc
      .tuple(fc.integer({ min: 0, max: 60 }), fc.integer({ min: 0, max: 20 }), fc.integer({ min: 0, max: 5 }))
      .map(([lo, len, id]) => ({ lo: BigInt(lo), hi: BigInt(lo + len), id })),
    { maxLength: 30 },
  )
  .map((rs) => rs.map((r, order) => ({ ...r, order })));

describe('range rows resolved into one partition', () => {
  it('are the pieces the splice resolution made, and each address the latest row holding it', () => {
    fc.assert(
      fc.property(rowsArb, (rows) => {
        const got = resolveRows(rows);
        equal(got, spliceReference(rows));
        for (let x = 0n; x <= 81n; x++) {
          const latest = rows.filter((r) => r.lo <= x && x <= r.hi).sort((a, b) => b.order - a.order)[0];
          const piece = got.find((p) => p.lo <= x && x <= p.hi);
          same(piece?.order, latest?.order, () => `address ${x}`);
        }
      }),
      params,
    );
  });

  it('resolves 64 000 rows nested with one start (the splice resolution: about 14 minutes for 16 000)', () => {
    const n = 64_000;
    // Widest first, each next one a block narrower: every row's start is the same address.
    const rows = Array.from({ length: n }, (_, i) => ({ lo: 1n << 24n, hi: (1n << 24n) + BigInt((n - i) * 256 - 1), order: i, id: i % 7 }));
    const started = Date.now();
    const got = resolveRows(rows);
    const ms = Date.now() - started;
    console.log(`row partition: ${n} nested rows in ${ms} ms`);
    // Each row wins the block past the next narrower one's end.
    expect(got).toHaveLength(n);
    expect(got[0]).toEqual({ lo: 1n << 24n, hi: (1n << 24n) + 255n, order: n - 1, id: (n - 1) % 7 });
    expect(got[n - 1].order).toBe(0);
  });
});
