import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CountWindow } from '../../../src/record/count.js';
import { seed } from '../../helpers/env.js';

const MINUTE = 60_000;

/** The reference: every count kept with its minute; the window is the last 1 440 minutes up to now. */
class Reference {
  readonly events: [number, number][] = [];
  live(now: number): number {
    const m = Math.floor(now / MINUTE);
    return this.events.filter(([k]) => k > m - 1440 && k <= m).reduce((s, [, n]) => s + n, 0);
  }
  minutes(now: number): [number, number][] {
    const m = Math.floor(now / MINUTE);
    const by = new Map<number, number>();
    for (const [k, n] of this.events) if (k > m - 1440 && k <= m) by.set(k, (by.get(k) ?? 0) + n);
    return [...by].sort((a, b) => a[0] - b[0]);
  }
}

const step = fc.oneof(
  fc.record({ kind: fc.constant('add' as const), gap: fc.integer({ min: 0, max: 5 * MINUTE }), n: fc.integer({ min: 1, max: 1000 }) }),
  fc.record({ kind: fc.constant('jump' as const), gap: fc.integer({ min: 0, max: 3 * 1440 * MINUTE }), n: fc.constant(0) }),
  fc.record({ kind: fc.constant('restore' as const), gap: fc.integer({ min: 0, max: 2 * 1440 }), n: fc.integer({ min: 1, max: 50 }) }),
);

describe('count window', () => {
  it('answers what a list of every count says, over any sequence of counts, idle days and restored minutes', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 60 }), (steps) => {
        const w = new CountWindow();
        const ref = new Reference();
        let now = Date.UTC(2026, 0, 1);
        for (const s of steps) {
          if (s.kind === 'restore') {
            // A saved minute up to two days back (older ones are dropped).
            const k = Math.floor(now / MINUTE) - s.gap;
            w.restore([[k, s.n]], now);
            if (s.gap < 1440) ref.events.push([k, s.n]);
          } else {
            now += s.gap;
            if (s.kind === 'add') {
              w.add(now, s.n);
              ref.events.push([Math.floor(now / MINUTE), s.n]);
            }
          }
          expect(w.live(now)).toBe(ref.live(now));
          expect(w.minutes(now)).toEqual(ref.minutes(now));
        }
      }),
      { seed: seed(), numRuns: 300 },
    );
  });
});
